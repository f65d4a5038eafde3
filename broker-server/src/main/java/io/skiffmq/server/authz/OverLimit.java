package io.skiffmq.server.authz;

/**
 * A connection refused for a {@code max-connections} limit: the virtual host's or the user's, worded as each of
 * RabbitMQ's readers words it (they differ). Immutable.
 */
public record OverLimit(boolean vhostLimit, String vhost, String user, long limit) {
    /** As {@code rabbit_amqp_reader} says it (AMQP 1.0). */
    public String amqp10() {
        return vhostLimit
            ? "access to vhost '" + vhost + "' refused for user '" + user + "': vhost connection limit (" + limit
                + ") is reached"
            : "connection refused for user '" + user + "': user connection limit (" + limit + ") is reached";
    }

    /** As {@code rabbit_reader} says it (0-9-1). */
    public String amqp091() {
        return vhostLimit
            ? "access to vhost '" + vhost + "' refused for user '" + user + "': connection limit (" + limit
                + ") is reached"
            : "Connection refused for user '" + user + "': user connection limit (" + limit + ") is reached";
    }
}
