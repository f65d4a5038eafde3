package io.skiffmq.core;

/**
 * RabbitMQ's words when a change to its metadata store times out (no majority committed it in time), which every
 * protocol gives for the same change here. Their sources: {@code rabbit_amqqueue:delete_with/6},
 * {@code rabbit_channel}'s exchange delete, {@code rabbit_binding}'s remove.
 */
public final class MetadataTimeouts {
    public static final String QUEUE_DELETE = "The operation to delete the queue from the metadata store timed out";
    /** A format: the exchange's name, then the virtual host's. */
    public static final String EXCHANGE_DELETE = "failed to delete exchange '%s' in vhost '%s' due to a timeout";
    public static final String UNBIND = "Could not remove binding due to timeout";

    private MetadataTimeouts() {
    }
}
