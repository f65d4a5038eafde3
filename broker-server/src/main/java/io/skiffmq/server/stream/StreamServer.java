package io.skiffmq.server.stream;

import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;
import io.skiffmq.server.Broker;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.config.BrokerConfig;

/**
 * What every stream protocol connection of a listener shares: the broker, its authentication, the settings, and the
 * single active consumer groups ({@link ConsumerGroups}), which span connections. {@link #newConnection} makes the
 * handler of an accepted connection. Thread-safe.
 */
public final class StreamServer {
    private final Broker broker;
    private final SaslAuthenticator sasl;
    private final ConsumerGroups groups = new ConsumerGroups();

    public StreamServer(Broker broker, SaslAuthenticator sasl) {
        this.broker = broker;
        this.sasl = sasl;
    }

    /** The handler of a connection accepted on the stream port ({@code tls}: on the TLS one). */
    public StreamConnectionHandler newConnection(ConnectionCounters counters, boolean tls) {
        return new StreamConnectionHandler(this, counters, tls);
    }

    /** Counters for a new stream protocol connection. */
    public static ConnectionCounters counters() {
        return new ConnectionCounters(BrokerCounters.STREAM);
    }

    /**
     * The single active consumer groups on {@code stream} in {@code vhost} and their members, active or waiting
     * (for listings such as RabbitMQ's {@code list_stream_group_consumers}). Any thread.
     */
    public java.util.List<GroupMember> groupMembers(String vhost, String stream) {
        return groups.members(vhost, stream);
    }

    Broker broker() {
        return broker;
    }

    BrokerConfig config() {
        return broker.config();
    }

    StreamSettings settings() {
        return broker.config().stream();
    }

    SaslAuthenticator sasl() {
        return sasl;
    }

    ConsumerGroups groups() {
        return groups;
    }
}
