package io.skiffmq.core.queue;

/**
 * A queue's numbers for monitoring: volatile copies written on the queue's thread (after each change that moves
 * them), read anywhere; approximate off that thread.
 */
final class QueueGauges {
    /** Messages waiting, paged ones included. */
    volatile int ready;
    /** Bytes of waiting messages held in memory (paged-out ones not counted). */
    volatile long memoryBytes;
    /** Consumers pushed to, standby ones of a single-active-consumer queue included. */
    volatile int consumers;
    /** Deliveries handed out and not yet settled, all consumers together. */
    volatile int unacked;
}
