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

    /** Why a message died, as {@code x-death} names it. */
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
}
