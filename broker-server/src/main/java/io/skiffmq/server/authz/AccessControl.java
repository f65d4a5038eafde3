package io.skiffmq.server.authz;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import io.skiffmq.server.peer.PeerLinks;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who may use which virtual host and resource, and how much: the durable {@link BrokerDefinitions} (each change
 * appended to a {@link DefinitionsLog}, and durable, before it takes effect), compiled into the {@link Policy} in
 * force, and the counts the limits are checked against (connections per virtual host and per user, channels or
 * sessions per user).
 *
 * <p>Thread-safe: changes are serialised on {@code this} and publish a new immutable {@link Policy} through a
 * volatile field; checks read whichever policy is current, without locking. Counts are atomic. In a cluster the
 * policy has one writer instead, the metadata log's applier thread ({@link #applied}, {@link #replaceAll}):
 * {@link #update} only checks and appends, and the change takes effect here when the log applies it.
 */
public final class AccessControl {
    private final DefinitionsLog log;
    /** The user a connection without SASL runs as ({@code allow-plain-amqp}); it may do anything. Null: none. */
    private final String unrestrictedUser;
    private volatile Policy policy;
    private final Map<String, AtomicInteger> vhostConnections = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> userConnections = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> userChannels = new ConcurrentHashMap<>();

    public AccessControl(DefinitionsLog log, BrokerDefinitions definitions, String unrestrictedUser) {
        this.log = log;
        this.unrestrictedUser = unrestrictedUser;
        this.policy = new Policy(1, definitions);
    }

    /** The definitions in force. */
    public BrokerDefinitions definitions() {
        return policy.definitions();
    }

    /**
     * Applies changes: computes the new definitions, checks their regular expressions compile, appends the changes
     * to the log and waits until they are durable, then puts them in force (in a cluster the log's applier has, on
     * every node, by the time the append completes). Waits for the disk: never call from an event loop.
     *
     * @throws IllegalArgumentException when an expression does not compile (nothing changes)
     * @throws io.skiffmq.cluster.NoMajorityException in a cluster, when no majority committed the change in time
     */
    public synchronized BrokerDefinitions update(BrokerChange... changes) {
        BrokerDefinitions next = policy.definitions();
        for (BrokerChange change : changes) {
            next = next.apply(change);
        }
        Policy compiled;
        try {
            compiled = new Policy(policy.version() + 1, next);
        } catch (java.util.regex.PatternSyntaxException e) {
            throw new IllegalArgumentException("invalid regular expression: " + e.getDescription() + " in '"
                + e.getPattern() + "'", e);
        }
        try {
            log.append(List.of(changes)).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while saving definitions", e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof io.skiffmq.cluster.NoMajorityException noMajority) {
                throw noMajority;
            }
            throw new IllegalStateException("saving definitions failed: " + e.getCause(), e.getCause());
        }
        if (log.appliesChanges()) {
            return policy.definitions(); // the log's applier put them in force, with any other node's changes
        }
        policy = compiled;
        return next;
    }

    /** In a cluster: a change the metadata log committed, put in force. On the log's applier thread only. */
    public void applied(BrokerChange change) {
        Policy current = policy;
        policy = new Policy(current.version() + 1, current.definitions().apply(change));
    }

    /** In a cluster: every definition replaced (a snapshot installed). On the log's applier thread only. */
    public void replaceAll(BrokerDefinitions definitions) {
        policy = new Policy(policy.version() + 1, definitions);
    }

    Policy policy() {
        return policy;
    }

    /** The user's definition, or null. */
    public UserDefinition user(String name) {
        return policy.user(name);
    }

    /** The virtual host's definition, or null when it does not exist. */
    public VhostDefinition vhost(String name) {
        return policy.vhost(name);
    }

    /** True when {@code user} has permissions in {@code vhost} (any, even ones that match nothing), as RabbitMQ. */
    public boolean mayAccess(String user, String vhost) {
        return user.equals(unrestrictedUser) || user.equals(PeerLinks.NODE_USER)
            || policy.grant(user, vhost) != null;
    }

    boolean unrestricted(String user) {
        return user.equals(unrestrictedUser) || user.equals(PeerLinks.NODE_USER);
    }

    /** A connection's checker for {@code user} in {@code vhost}; owned by the connection's thread. */
    public Access access(String user, String vhost) {
        return new Access(this, user, vhost);
    }

    /**
     * Counts a new connection of {@code user} to {@code vhost} unless that would pass the virtual host's or the
     * user's {@code max-connections}; which limit refused it otherwise, counting nothing. Every counted connection
     * must be {@link #connectionClosed closed}.
     */
    public OverLimit connectionOpened(String user, String vhost) {
        VhostDefinition v = policy.vhost(vhost);
        AtomicInteger perVhost = vhostConnections.computeIfAbsent(vhost, k -> new AtomicInteger());
        if (v != null && !take(perVhost, v.maxConnections())) {
            return new OverLimit(true, vhost, user, v.maxConnections());
        }
        UserDefinition u = policy.user(user);
        AtomicInteger perUser = userConnections.computeIfAbsent(user, k -> new AtomicInteger());
        if (u != null && !take(perUser, u.maxConnections())) {
            perVhost.decrementAndGet();
            return new OverLimit(false, vhost, user, u.maxConnections());
        }
        if (u == null) {
            perUser.incrementAndGet();
        }
        if (v == null) {
            perVhost.incrementAndGet();
        }
        return null;
    }

    public void connectionClosed(String user, String vhost) {
        vhostConnections.get(vhost).decrementAndGet();
        userConnections.get(user).decrementAndGet();
    }

    /**
     * Counts a new channel (0-9-1) or session (AMQP 1.0) of {@code user} unless that would pass its
     * {@code max-channels}: then the refusal's text (RabbitMQ's), counting nothing. Every counted one must be
     * {@link #channelClosed closed}.
     */
    public String channelOpened(String user) {
        UserDefinition u = policy.user(user);
        AtomicInteger count = userChannels.computeIfAbsent(user, k -> new AtomicInteger());
        if (u == null) {
            count.incrementAndGet();
            return null;
        }
        return take(count, u.maxChannels()) ? null : "number of channels opened for user '" + user
            + "' has reached the maximum allowed user limit of (" + u.maxChannels() + ")";
    }

    public void channelClosed(String user) {
        userChannels.get(user).decrementAndGet();
    }

    /** Adds one to {@code count} unless it is at {@code limit} already (-1: no limit). */
    private static boolean take(AtomicInteger count, long limit) {
        for (;;) {
            int now = count.get();
            if (limit >= 0 && now >= limit) {
                return false;
            }
            if (count.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }
}
