package io.skiffmq.core.queue;

/**
 * A queue's counts at one moment on its thread.
 *
 * @param ready messages waiting for a consumer (not those delivered and unsettled)
 * @param consumers consumers messages are pushed to (pull and cancelled consumers do not count)
 * @param unacknowledged deliveries handed to consumers (pull ones too) and not settled yet
 */
public record QueueCounts(int ready, int consumers, int unacknowledged) {
}
