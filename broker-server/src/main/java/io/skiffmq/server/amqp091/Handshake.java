package io.skiffmq.server.amqp091;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ConnectionAdmission;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.auth.Credentials;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.auth.PeerAddress;
import io.skiffmq.server.auth.PeerCertificate;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.authz.OverLimit;
import io.skiffmq.server.connection.HandshakeDeadline;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A 0-9-1 connection's handshake, from {@code connection.start} to {@code open-ok}, within the handshake timeout:
 * the login in {@code start-ok} (checked off the loop, the connection suspended meanwhile), {@code tune-ok} applied
 * to the pipeline (frame-max, heartbeats), and {@code open}'s admission to the virtual host. {@link Negotiation}
 * says what is offered and accepted; this does the talking and tells the connection when it is open.
 *
 * <p>Stages: {@code AWAIT_START_OK} → {@code AWAIT_TUNE_OK} → {@code AWAIT_OPEN} → {@code DONE}; a method out of
 * turn is 503 COMMAND_INVALID. Owned by the connection's event loop; not thread-safe.
 */
final class Handshake {
    private enum Stage { AWAIT_START_OK, AWAIT_TUNE_OK, AWAIT_OPEN, DONE }

    /**
     * The capabilities the broker acts on; {@link #capabilities} has bit i set when the client's start-ok claims the
     * i-th. Bits, not the client's table: the connection keeps that, encoded (ClientProperties).
     */
    private static final List<String> ACTED_ON = List.of("consumer_cancel_notify", "connection.blocked",
        "authentication_failure_close");

    private final Amqp091ConnectionHandler connection;
    private final Negotiation negotiation;
    private final SaslAuthenticator sasl;
    private final ConnectionAdmission admission;
    private final ChannelTable channels;
    private final ChannelHandlerContext ctx;
    private Stage stage = Stage.AWAIT_START_OK;
    /** Bit i: the client claims the capability {@code ACTED_ON[i]}. */
    private int capabilities;
    /** The verified TLS client certificate, or null. */
    private X509Certificate peer;
    private ScheduledFuture<?> timeout;
    /** The heartbeat interval {@code tune-ok} agreed, 0 for none (or before it). */
    private int heartbeatSeconds;

    Handshake(Amqp091ConnectionHandler connection, ChannelHandlerContext ctx, SaslAuthenticator sasl,
            ConnectionAdmission admission, ChannelTable channels) {
        this.connection = connection;
        this.ctx = ctx;
        this.negotiation = new Negotiation(connection.config(), sasl);
        this.sasl = sasl;
        this.admission = admission;
        this.channels = channels;
    }

    /** Sends {@code connection.start}; a handshake not done within the timeout closes the socket. */
    void start() {
        BrokerConfig config = connection.config();
        timeout = HandshakeDeadline.schedule(ctx.channel(), config.handshakeTimeoutMillis(), () -> {
            if (stage != Stage.DONE && !connection.closing() && connection.end(ConnectionEnd.HANDSHAKE_TIMEOUT,
                    "handshake not done within " + config.handshakeTimeoutMillis() + " ms")) {
                connection.resetSocket();
            }
        });
        peer = PeerCertificate.of(ctx.channel());
        connection.output().method(0, negotiation.start(peer, connection.clusterName()));
        connection.output().flush();
    }

    /** The connection ended: the timeout has nothing more to watch. */
    void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    /** A method on channel 0 before the connection is open. */
    void onMethod(Method method) {
        switch (stage) {
            case AWAIT_START_OK -> {
                if (!(method instanceof ConnectionMethod.StartOk startOk)) {
                    throw unexpected(method, "connection.start-ok");
                }
                onStartOk(startOk);
            }
            case AWAIT_TUNE_OK -> {
                if (!(method instanceof ConnectionMethod.TuneOk tuneOk)) {
                    throw unexpected(method, "connection.tune-ok");
                }
                onTuneOk(tuneOk);
            }
            case AWAIT_OPEN -> {
                if (!(method instanceof ConnectionMethod.Open open)) {
                    throw unexpected(method, "connection.open");
                }
                onOpen(open);
            }
            default -> throw new IllegalStateException(stage.toString());
        }
    }

    private static Amqp091Exception unexpected(Method method, String expected) {
        return Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "expected '%s', got '%s'", expected,
            method.name());
    }

    /**
     * Whether an error closes the socket without {@code connection.close}: before {@code tune-ok} RabbitMQ does not
     * trust the client with one, except to refuse its login when it has the {@code authentication_failure_close}
     * capability.
     */
    boolean closesSilently(Amqp091Exception e) {
        return stage == Stage.AWAIT_TUNE_OK || stage == Stage.AWAIT_START_OK && e.code() != ReplyCode.ACCESS_REFUSED;
    }

    /** The heartbeat interval {@code tune-ok} agreed, in seconds; 0 for none, or before {@code tune-ok}. */
    int heartbeatSeconds() {
        return heartbeatSeconds;
    }

    /**
     * True when the client's {@code start-ok} says it has {@code capability}: {@code consumer_cancel_notify},
     * {@code connection.blocked} or {@code authentication_failure_close}.
     */
    boolean clientCapability(String capability) {
        int bit = ACTED_ON.indexOf(capability);
        return bit >= 0 && (capabilities & 1 << bit) != 0;
    }

    /**
     * Reads the credentials here and has them checked off the loop ({@link SaslAuthenticator#login}), the
     * connection suspended meanwhile (frames that arrive wait, in order); {@link #onLogin} goes on, on this loop.
     */
    private void onStartOk(ConnectionMethod.StartOk startOk) {
        connection.clientProperties(startOk.clientProperties());
        if (startOk.clientProperties().get("capabilities") instanceof Map<?, ?> claimed) {
            for (int bit = 0; bit < ACTED_ON.size(); bit++) {
                if (Boolean.TRUE.equals(claimed.get(ACTED_ON.get(bit)))) {
                    capabilities |= 1 << bit;
                }
            }
        }
        Credentials credentials = negotiation.credentials(startOk, peer);
        connection.await(null, sasl.login(credentials, PeerAddress.of(ctx.channel())), startOk,
            result -> onLogin(startOk, result));
    }

    /** The login's outcome, on this loop: {@code tune}, or 403 ACCESS_REFUSED saying why. */
    private void onLogin(ConnectionMethod.StartOk startOk, LoginResult result) {
        if (stage != Stage.AWAIT_START_OK || connection.closing()) {
            return; // closed meanwhile (handshake timeout, shutdown, the peer)
        }
        String mechanism = startOk.mechanism();
        if (!result.succeeded()) {
            Amqp091Exception refused = Negotiation.refusal(startOk, result);
            if (clientCapability("authentication_failure_close")) {
                connection.closeConnection(ConnectionEnd.AUTH_FAILURE, refused);
            } else if (connection.end(ConnectionEnd.AUTH_FAILURE, "authentication failed (" + mechanism + "): "
                    + result.reason())) {
                // an older client takes a close as a hard error: the socket just closes, as the spec says
                connection.output().flush();
                connection.closeSocket();
            }
            return;
        }
        admission.loggedIn(result.user(), mechanism);
        connection.output().method(0, negotiation.tune());
        stage = Stage.AWAIT_TUNE_OK;
    }

    private void onTuneOk(ConnectionMethod.TuneOk tuneOk) {
        negotiation.checkTuneOk(tuneOk);
        channels.channelMax(tuneOk.channelMax());
        int frameMax = (int) tuneOk.frameMax();
        ctx.pipeline().get(Amqp091FrameDecoder.class).frameMax(frameMax);
        connection.output().frameMax(frameMax);
        int heartbeat = tuneOk.heartbeat();
        heartbeatSeconds = heartbeat;
        admission.tuned(frameMax, tuneOk.channelMax(), heartbeat);
        if (heartbeat > 0) {
            // a heartbeat every half interval; a peer silent for two intervals is gone (RabbitMQ's reading)
            ctx.pipeline().addBefore(ctx.name(), "idle", new IdleStateHandler(heartbeat * 2L * 1000,
                heartbeat * 1000L / 2, 0, TimeUnit.MILLISECONDS));
        }
        stage = Stage.AWAIT_OPEN;
    }

    private void onOpen(ConnectionMethod.Open open) {
        String name = open.virtualHost();
        VirtualHost found = admission.find(name);
        if (found == null) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, open, "vhost %s not found", name);
        }
        // rabbit_reader's order: the limits, then access to the virtual host
        OverLimit overLimit = admission.count(name);
        if (overLimit != null) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, open, "%s", overLimit.amqp091());
        }
        if (!admission.mayAccess(name)) {
            admission.uncount(name);
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, open, "access to vhost '%s' refused for user '%s'", name,
                admission.user());
        }
        admission.admitted(found, name);
        cancelTimeout();
        connection.output().method(0, ConnectionMethod.OpenOk.INSTANCE);
        stage = Stage.DONE;
        connection.handshakeDone();
    }
}
