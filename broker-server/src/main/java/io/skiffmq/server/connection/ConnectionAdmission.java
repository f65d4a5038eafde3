package io.skiffmq.server.connection;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.Broker;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.AccessControl;
import io.skiffmq.server.authz.OverLimit;

/**
 * Who a connection is and where it was let in, for either protocol: the user once logged in, the virtual host once
 * open with the user's permissions there, and the counting in the user's and the virtual host's limits
 * ({@link AccessControl}): a connection counts from its open to its end, a channel or session from its open to its
 * release. The steps of admission are separate because the protocols take them in different orders (0-9-1: limits,
 * then access; AMQP 1.0: access, then limits) and tell refusals in their own terms.
 *
 * <p>It also keeps what listings show of the connection ({@link #details}): when it was accepted, the login's
 * mechanism and what was tuned.
 *
 * <p>Owned by the connection's event loop; {@link #access} and {@link #details} alone may be read from any thread.
 */
public final class ConnectionAdmission {
    private final Broker broker;
    private final AccessControl control;
    private String user;
    private VirtualHost vhost;
    /** The user's permissions in {@link #vhost}, once open; counted in the limits until the connection ends. */
    private volatile Access access;
    private boolean released;
    /** {@link ConnectionName}, for the log; set when the connection becomes active. */
    private String connectionName = "?";
    /** The connection's socket, set with its name. */
    private io.netty.channel.Channel socket;
    private static final System.Logger LOG = System.getLogger(ConnectionAdmission.class.getName());
    /** Replaced whole on the loop as the handshake goes; read by listings on any thread. */
    private volatile ConnectionDetails details = new ConnectionDetails(System.currentTimeMillis(), null, 0, 0, 0);

    /** Where the connection counts its open channels or sessions ({@code rabbitmq_channels}). */
    private final io.skiffmq.core.metrics.ConnectionCounters counters;

    public ConnectionAdmission(Broker broker, io.skiffmq.core.metrics.ConnectionCounters counters) {
        this.counters = counters;
        this.broker = broker;
        this.control = broker.accessControl();
    }

    /**
     * The connection's {@link ConnectionName}, which the admission's log line starts with, and its socket, which
     * leaves the {@link PreAuthLimit} once admitted.
     */
    public void named(String name, io.netty.channel.Channel socket) {
        this.connectionName = name;
        this.socket = socket;
    }

    /**
     * The login succeeded (or, for plain AMQP 1.0, was not asked for) as {@code user}.
     *
     * @param mechanism the SASL mechanism it used ({@code auth_mechanism}); null for none
     */
    public void loggedIn(String name, String mechanism) {
        this.user = name;
        ConnectionDetails d = details;
        details = new ConnectionDetails(d.connectedAt(), mechanism, d.frameMax(), d.channelMax(), d.heartbeatSeconds());
    }

    /** What the handshake agreed: frame-max (0 for no limit), channel-max and the heartbeat in seconds. */
    public void tuned(long frameMax, int channelMax, int heartbeatSeconds) {
        ConnectionDetails d = details;
        details = new ConnectionDetails(d.connectedAt(), d.authMechanism(), frameMax, channelMax, heartbeatSeconds);
    }

    /** What listings show of the connection. Any thread. */
    public ConnectionDetails details() {
        return details;
    }

    /** Where the connection's session, link and channel errors are logged. */
    public ScopeErrors scopeErrors() {
        return broker.scopeErrors();
    }

    /** The authenticated user; null before the login. */
    public String user() {
        return user;
    }

    /** The virtual host the connection opened; null before. */
    public VirtualHost vhost() {
        return vhost;
    }

    /** The user's permission checks in the connection's virtual host; null before it opened. Any thread. */
    public Access access() {
        return access;
    }

    /** Whether the user may use the virtual host {@code name}. */
    public boolean mayAccess(String name) {
        return control.mayAccess(user, name);
    }

    /**
     * Counts the connection in the user's and {@code name}'s limits; null when it fits, else what is over (and it
     * is not counted). Undo with {@link #uncount} when the open fails after this.
     */
    public OverLimit count(String name) {
        return control.connectionOpened(user, name);
    }

    /** Takes back a {@link #count} for an open that failed afterwards. */
    public void uncount(String name) {
        control.connectionClosed(user, name);
    }

    /** The virtual host {@code name}, defined and running; null when it does not exist. */
    public VirtualHost find(String name) {
        return control.vhost(name) == null ? null : broker.vhost(name);
    }

    /** The connection is open in {@code found}, counted by {@link #count}: its permissions there are fixed now. */
    public void admitted(VirtualHost found, String name) {
        vhost = found;
        access = control.access(user, name);
        PreAuthLimit.opened(socket);
        LOG.log(System.Logger.Level.INFO, "connection {0}: user ''{1}'' authenticated and granted access to vhost"
            + " ''{2}''", connectionName, user, name);
    }

    /**
     * Counts a channel (0-9-1) or session (AMQP 1.0) in the user's {@code max-channels}; null when it fits, else the
     * refusal's text (and it is not counted). {@link #channelClosed} takes it back.
     */
    public String channelOpened() {
        String refusal = control.channelOpened(user);
        if (refusal == null) {
            counters.channelOpened();
        }
        return refusal;
    }

    /** A channel or session counted by {@link #channelOpened} is gone. */
    public void channelClosed() {
        counters.channelClosed();
        control.channelClosed(user);
    }

    /**
     * The connection ended: its exclusive queues go with it, and it no longer counts in the limits. Once: later
     * calls do nothing (a 0-9-1 connection calls it at the client's close, and again when the socket goes).
     */
    public void closed(ClientConnection connection) {
        if (released) {
            return;
        }
        released = true;
        if (vhost != null) {
            vhost.ownerClosed(connection);
        }
        if (access != null) {
            control.connectionClosed(user, access.vhost());
        }
    }
}
