package io.skiffmq.server.connection;

import io.netty.util.concurrent.Future;

/**
 * A client connection of any protocol, as the {@code Broker}'s registry of open connections sees it: enough to
 * close it when the broker stops, or when its virtual host or user is deleted.
 */
public interface ClientConnection {
    /**
     * Closes the connection because the broker is stopping, telling the peer so in its protocol's terms. Called from
     * any thread; the work runs on the connection's event loop.
     *
     * @return done once the socket is closed: at once over AMQP 1.0 (the close frame is written, then the socket
     *     closes), on the client's {@code close-ok} or its timeout over 0-9-1
     */
    Future<?> closeForShutdown();

    /**
     * The broker's resource alarms changed ({@code Broker.alarms()}): publishers are to be held back or let go.
     * Called from any thread (the resource monitor's); the connection reads the alarms up now and applies them on
     * its event loop, so calls that cross each other do no harm.
     */
    void resourceAlarmsChanged();

    /**
     * The user and virtual host the connection opened (its permission checks: read only their names here); null
     * before it opened. Safe from any thread.
     */
    io.skiffmq.server.authz.Access opened();

    /**
     * Closes the connection because an administrator took its virtual host or user away (0-9-1: 320
     * CONNECTION_FORCED; AMQP 1.0: {@code amqp:connection:forced}). Called from any thread.
     *
     * @return done once the close is written
     */
    Future<?> closeForced(String description);

    /** What the connection counted (messages published and delivered, bytes); written on its event loop. */
    io.skiffmq.core.metrics.ConnectionCounters counters();

    /** The connection's socket; null before it is active. Any thread. */
    io.netty.channel.Channel socket();

    /** The client's address (the HTTP API's {@code peer_host}, {@code peer_port}); null once closed. Any thread. */
    default java.net.SocketAddress remoteAddress() {
        io.netty.channel.Channel socket = socket();
        return socket == null ? null : socket.remoteAddress();
    }

    /** Our end's address ({@code host}, {@code port}); null once closed. Any thread. */
    default java.net.SocketAddress localAddress() {
        io.netty.channel.Channel socket = socket();
        return socket == null ? null : socket.localAddress();
    }

    /** The protocol as RabbitMQ names it: {@code AMQP 0-9-1} or {@code AMQP 1.0}. */
    String protocol();

    /**
     * AMQP 1.0: the container-id of the peer's {@code open} (the HTTP API's {@code container_id}, which the RabbitMQ
     * AMQP 1.0 clients' suites find their connections by); null before it, and over 0-9-1. Any thread.
     */
    default String containerId() {
        return null;
    }

    /**
     * The properties the client sent (0-9-1 {@code start-ok}'s client-properties, AMQP 1.0 {@code open}'s
     * properties) as a table ({@link ClientProperties}); empty before it sent them, or when it sent none. Decoded
     * at each call. Any thread.
     */
    default java.util.Map<String, Object> clientProperties() {
        return java.util.Map.of();
    }

    /**
     * The name the client gave its connection (RabbitMQ's {@code user_provided_name}: 0-9-1's
     * {@code connection_name} client property); null when it gave none. Any thread.
     */
    default String userProvidedName() {
        return null;
    }

    /**
     * When it was accepted, its login's mechanism and what was tuned (the HTTP API's {@code connected_at},
     * {@code auth_mechanism}, {@code frame_max}, {@code channel_max}, {@code timeout}). Any thread.
     */
    ConnectionDetails details();

    /**
     * Its channels (AMQP 1.0: sessions) and their consumers, read on the connection's event loop; an empty list when
     * the loop is gone. Called from any thread.
     */
    java.util.concurrent.CompletableFuture<java.util.List<ChannelInfo>> channels();
}
