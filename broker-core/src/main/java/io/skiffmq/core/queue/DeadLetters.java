package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * Where a queue sends the messages that die in it (its virtual host routes them through the queue's
 * {@code x-dead-letter-exchange}). At most once, as RabbitMQ's classic queues dead-letter: the dying message leaves
 * its queue whether or not a queue takes it.
 */
public interface DeadLetters {
    /** Nowhere: dying messages are dropped. */
    DeadLetters NONE = (message, reason, queue, arguments, deliveryCount) -> message.release();

    /** Why a message died, as {@code x-death} names it. The ordinals are on disk (a journal record): never reorder. */
    enum Reason {
        REJECTED("rejected"), EXPIRED("expired"), MAXLEN("maxlen"), DELIVERY_LIMIT("delivery_limit");

        private final String value;

        Reason(String value) {
            this.value = value;
        }

        public String value() {
            return value;
        }
    }

    /**
     * Dead-letters a message, on the dying queue's thread.
     *
     * @param message one reference, taken over
     * @param queue the name of the queue it died in
     * @param arguments that queue's arguments: its dead-letter exchange and routing key
     * @param deliveryCount its failed deliveries in that queue, which the dead-lettered copy keeps
     *        ({@link Message#deadLettered(String, String, java.time.Instant, String, String, long)})
     */
    void deadLetter(Message message, Reason reason, String queue, QueueArguments arguments, long deliveryCount);

    /**
     * Dead-letters at least once: as {@link #deadLetter(Message, Reason, String, QueueArguments, long)}, then tells
     * {@code confirmed}, once, on any thread: true when every queue the copy was routed to confirmed it (took it as
     * safely as it promises its publishers), false when it could not be routed anywhere now (no dead-letter exchange,
     * no queue bound) or a target refused it, so the dying queue tries again later.
     */
    default void deadLetter(Message message, Reason reason, String queue, QueueArguments arguments, long deliveryCount,
            Confirmed confirmed) {
        deadLetter(message, reason, queue, arguments, deliveryCount);
        confirmed.taken(true);
    }

    /** How long a queue waits before trying again the messages it could not dead-letter at least once. */
    default long retryMillis() {
        return DEFAULT_RETRY_MILLIS;
    }

    /** RabbitMQ's {@code dead_letter_worker_publisher_confirm_timeout}: 3 minutes. */
    long DEFAULT_RETRY_MILLIS = 180_000;

    /** What a dead-lettering at least once came to. */
    @FunctionalInterface
    interface Confirmed {
        void taken(boolean taken);
    }
}
