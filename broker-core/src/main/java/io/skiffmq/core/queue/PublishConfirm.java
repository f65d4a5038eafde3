package io.skiffmq.core.queue;

/**
 * What a queue tells a publisher about one message it was given, once: {@link #run} when the message is as safe
 * as the queue promises, {@link #refused} when the queue did not take it. Called on the queue's thread, or on its
 * log's writer thread for a durable message. A Runnable, so the log can run it when the message is on disk.
 */
@FunctionalInterface
public interface PublishConfirm extends Runnable {
    /** The message is as safe as the queue promises (in memory, or on disk for a durable one). */
    @Override
    void run();

    /** The queue did not take the message (its log failed, a limit refused it): it is not kept. */
    default void refused() {
    }

    /**
     * The queue did not take the message because it is unavailable (its home node cannot be reached): refused, and
     * an AMQP 1.0 publisher's {@code rejected} says so in RabbitMQ's words.
     */
    default void unavailable(String queue) {
        refused();
    }
}
