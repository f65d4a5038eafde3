package io.skiffmq.server.amqp091;

import java.util.Arrays;

/**
 * A channel's publisher confirms ({@code confirm.select}): numbers its publishes 1, 2, 3, …, and turns the
 * confirms the core reports (ranges of those numbers, in any order) into {@code basic.ack}s as RabbitMQ sends them:
 * per batch, the confirmed numbers below the lowest one still unconfirmed (and the lowest refused) go in one
 * {@code ack} with {@code multiple}, the others one {@code ack} each, refused ones one {@code nack} each
 * ({@code rabbit_channel}'s {@code coalesce_and_send}).
 *
 * <p>Owned by the channel's event loop. A ring of flags indexed by number; nothing is allocated per message.
 */
final class PublisherConfirms {
    /** Where the acks go. */
    interface Acks {
        void ack(long tag, boolean multiple);

        void nack(long tag, boolean multiple);
    }

    private boolean[] confirmed = new boolean[64];
    /** The lowest number not confirmed yet. */
    private long lowest = 1;
    private long next = 1;
    /** The ranges confirmed, and refused, in the current batch, as first/last pairs. */
    private long[] batch = new long[16];
    private int batchSize;
    private long[] refused = new long[4];
    private int refusedSize;

    /** The number of the next publish. */
    long next() {
        if (next - lowest == confirmed.length) {
            grow();
        }
        return next++;
    }

    /** Publishes numbered and not confirmed yet. */
    long unconfirmed() {
        return next - lowest;
    }

    /** Publishes {@code first..last} are confirmed; {@link #flush} sends the acks. */
    void confirmed(long first, long last) {
        mark(first, last);
        if (batchSize + 2 > batch.length) {
            batch = Arrays.copyOf(batch, batch.length * 2);
        }
        batch[batchSize++] = first;
        batch[batchSize++] = last;
    }

    /** Publishes {@code first..last} were refused by a queue; {@link #flush} sends the nacks. */
    void refused(long first, long last) {
        mark(first, last);
        if (refusedSize + 2 > refused.length) {
            refused = Arrays.copyOf(refused, refused.length * 2);
        }
        refused[refusedSize++] = first;
        refused[refusedSize++] = last;
    }

    private void mark(long first, long last) {
        for (long tag = first; tag <= last; tag++) {
            confirmed[(int) (tag & (confirmed.length - 1))] = true;
        }
    }

    /**
     * Sends the nacks, each on its own, then the acks for what was confirmed since the last flush: those below both
     * the lowest unconfirmed number and the lowest nacked one in one {@code multiple} ack, as RabbitMQ does.
     */
    void flush(Acks acks) {
        if (batchSize == 0 && refusedSize == 0) {
            return;
        }
        while (lowest < next && confirmed[(int) (lowest & (confirmed.length - 1))]) {
            confirmed[(int) (lowest & (confirmed.length - 1))] = false;
            lowest++;
        }
        long cutoff = lowest;
        for (int i = 0; i < refusedSize; i += 2) {
            cutoff = Math.min(cutoff, refused[i]);
            for (long tag = refused[i]; tag <= refused[i + 1]; tag++) {
                acks.nack(tag, false);
            }
        }
        long highestBelow = 0;
        for (int i = 0; i < batchSize; i += 2) {
            if (batch[i + 1] < cutoff) {
                highestBelow = Math.max(highestBelow, batch[i + 1]);
            }
        }
        if (highestBelow > 0) {
            acks.ack(highestBelow, true);
        }
        for (int i = 0; i < batchSize; i += 2) {
            for (long tag = Math.max(batch[i], cutoff); tag <= batch[i + 1]; tag++) {
                acks.ack(tag, false);
            }
        }
        batchSize = 0;
        refusedSize = 0;
    }

    private void grow() {
        boolean[] bigger = new boolean[confirmed.length * 2];
        for (long tag = lowest; tag < next; tag++) {
            bigger[(int) (tag & (bigger.length - 1))] = confirmed[(int) (tag & (confirmed.length - 1))];
        }
        confirmed = bigger;
    }
}
