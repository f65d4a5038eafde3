package io.skiffmq.server.amqp091;

import java.util.Arrays;

/**
 * A channel's publisher confirms ({@code confirm.select}): numbers its publishes 1, 2, 3, …, and turns the
 * confirms the core reports (ranges of those numbers, in any order) into {@code basic.ack}s as RabbitMQ sends them:
 * per batch, the confirmed numbers below the lowest one still unconfirmed go in one {@code ack} with
 * {@code multiple}, the others one {@code ack} each ({@code rabbit_channel}'s {@code coalesce_and_send}).
 *
 * <p>Owned by the channel's event loop. A ring of flags indexed by number; nothing is allocated per message.
 */
final class PublisherConfirms {
    /** Where the acks go. */
    interface Acks {
        void ack(long tag, boolean multiple);
    }

    private boolean[] confirmed = new boolean[64];
    /** The lowest number not confirmed yet. */
    private long lowest = 1;
    private long next = 1;
    /** The ranges confirmed in the current batch, as first/last pairs. */
    private long[] batch = new long[16];
    private int batchSize;

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
        for (long tag = first; tag <= last; tag++) {
            confirmed[(int) (tag & (confirmed.length - 1))] = true;
        }
        if (batchSize + 2 > batch.length) {
            batch = Arrays.copyOf(batch, batch.length * 2);
        }
        batch[batchSize++] = first;
        batch[batchSize++] = last;
    }

    /** Sends the acks for what was confirmed since the last flush. */
    void flush(Acks acks) {
        if (batchSize == 0) {
            return;
        }
        while (lowest < next && confirmed[(int) (lowest & (confirmed.length - 1))]) {
            confirmed[(int) (lowest & (confirmed.length - 1))] = false;
            lowest++;
        }
        long highestBelow = 0;
        for (int i = 0; i < batchSize; i += 2) {
            if (batch[i + 1] < lowest) {
                highestBelow = Math.max(highestBelow, batch[i + 1]);
            }
        }
        if (highestBelow > 0) {
            acks.ack(highestBelow, true);
        }
        for (int i = 0; i < batchSize; i += 2) {
            for (long tag = Math.max(batch[i], lowest); tag <= batch[i + 1]; tag++) {
                acks.ack(tag, false);
            }
        }
        batchSize = 0;
    }

    private void grow() {
        boolean[] bigger = new boolean[confirmed.length * 2];
        for (long tag = lowest; tag < next; tag++) {
            bigger[(int) (tag & (bigger.length - 1))] = confirmed[(int) (tag & (confirmed.length - 1))];
        }
        confirmed = bigger;
    }
}
