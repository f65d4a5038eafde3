package io.skiffmq.core.queue;

import io.skiffmq.core.time.BrokerClock;

/**
 * What a queue needs from the broker around it: its virtual host's name (for RabbitMQ's wording of errors), the
 * clock its TTLs and expiry run on, where its dead messages go, and whether it may hold its publishers back
 * ({@link PublisherFlow}).
 */
public record QueueContext(String vhost, BrokerClock clock, DeadLetters deadLetters, boolean publisherFlow) {
    /** A queue of a virtual host named {@code /} on the system clock, whose dead messages are dropped. */
    public static final QueueContext DEFAULT = new QueueContext("/", BrokerClock.SYSTEM, DeadLetters.NONE, true);
}
