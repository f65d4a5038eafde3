package io.skiffmq.core.queue;

/**
 * A queue's counts at one moment on its thread.
 *
 * @param ready messages waiting for a consumer (not those delivered and unsettled)
 * @param consumers consumers messages are pushed to (pull and cancelled consumers do not count)
 * @param unacknowledged deliveries handed to consumers (pull ones too) and not settled yet
 * @param deadLettering messages a quorum queue holds to dead-letter them at least once (RabbitMQ's
 *        {@code messages_dlx}), neither ready nor unacknowledged
 */
public record QueueCounts(int ready, int consumers, int unacknowledged, int deadLettering) {
    /** Counts of a queue that holds nothing to dead-letter. */
    public QueueCounts(int ready, int consumers, int unacknowledged) {
        this(ready, consumers, unacknowledged, 0);
    }
}
