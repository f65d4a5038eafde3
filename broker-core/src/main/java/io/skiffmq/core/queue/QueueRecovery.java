package io.skiffmq.core.queue;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * A durable queue's side of its {@link QueueLog}'s upkeep: the messages recovered at start put back, and the logged
 * messages copied forward so the log can reclaim the space behind them.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}.
 */
final class QueueRecovery {
    /** Null for a queue that keeps nothing on disk. */
    private final QueueLog log;
    private final QueueExecutor executor;
    private final QueueStatus status;
    private final WaitingMessages waiting;
    private final QueueLimits limits;
    private final QueueExpiry expiry;
    private final QueuePaging paging;
    private final QueueConsumers consumers;
    private final QueueGauges gauges;
    /** A quorum queue's messages held to be dead-lettered at least once; null for a classic queue. */
    private final AtLeastOnceDeadLetters dying;
    /** Messages the log says were waiting to be dead-lettered, handed to {@link #dying} once recovery is over. */
    private List<DeadLettering> deadLettering;

    private record DeadLettering(QueueEntry entry, DeadLetters.Reason reason) {
    }

    QueueRecovery(QueueLog log, QueueExecutor executor, QueueStatus status, WaitingMessages waiting, QueueLimits limits,
            QueueExpiry expiry, QueuePaging paging, QueueConsumers consumers, QueueGauges gauges,
            AtLeastOnceDeadLetters dying) {
        this.dying = dying;
        this.log = log;
        this.executor = executor;
        this.status = status;
        this.waiting = waiting;
        this.limits = limits;
        this.expiry = expiry;
        this.paging = paging;
        this.consumers = consumers;
        this.gauges = gauges;
    }

    /**
     * Puts back the messages recovered from the log (or a quorum queue's replica), in sequence order, each in its
     * lane (a quorum queue's returned ones ahead of its lanes): usually as an index only (a null message),
     * read back when dispatched; marked as acquired before when they may have been delivered before the restart,
     * expiring when the log says (see {@link QueueExpiry#restored}). Nothing expires yet: {@link #recovered} does.
     *
     * @param now the time of the restart
     * @return the sequence after the last one recovered, or 0 for none
     */
    long restore(List<StoredMessage> messages, long now) {
        long nextSequence = 0;
        for (StoredMessage stored : messages) {
            nextSequence = Math.max(nextSequence, stored.sequence() + 1);
            QueueEntry entry = QueueEntry.of(stored.sequence(), stored.message(), limits.lane(stored.priority()),
                stored.bodySize(), expiry.restored(stored, now), null, stored.location() >= 0,
                log != null && log.locatesBySequence() && stored.location() == stored.sequence());
            entry.deliveryCount(stored.deliveryCount());
            if (stored.returns() >= 0) {
                entry.returns = (int) Math.min(stored.returns(), Integer.MAX_VALUE);
            }
            entry.acquiredBefore = stored.deliveredBefore();
            entry.location(stored.location());
            if (stored.deadLettering() != null && dying != null) {
                if (deadLettering == null) {
                    deadLettering = new java.util.ArrayList<>();
                }
                // dead-lettered once every queue is back to take it: at recovered()
                deadLettering.add(new DeadLettering(entry, stored.deadLettering()));
            } else if (waiting.weighted() && entry.returns > 0) {
                // returned before: a quorum queue's go out first, as rabbit_fifo's returns do (in sequence order:
                // the order they came back in is not kept)
                waiting.putBack(entry);
            } else {
                waiting.arrive(entry);
            }
        }
        gauges.ready = waiting.size();
        return nextSequence;
    }

    /**
     * Recovery is over (every queue restored, the log writing): the timer is armed for the first head to expire,
     * at once for one whose time came while the broker was down, which then dies as any expired message does
     * (dead-lettered, as RabbitMQ's queue drops expired messages once it has recovered).
     */
    void recovered() {
        expiry.armTimer();
        if (deadLettering != null) {
            for (DeadLettering d : deadLettering) {
                dying.take(d.entry(), d.reason(), true);
            }
            deadLettering = null;
        }
    }

    /**
     * The broker stops cleanly: tells the log which of the queue's logged messages, waiting or unsettled, had been
     * delivered before ({@link QueueLog#stopped}). Paged tails hold arrivals only, never delivered.
     */
    void stopped() {
        Sequences delivered = new Sequences();
        Consumer<QueueEntry> note = entry -> {
            if (entry.acquiredBefore && entry.location() >= 0) {
                delivered.add(entry.sequence);
            }
        };
        waiting.forEach(note);
        for (QueueConsumer consumer : consumers.all) {
            consumer.unsettled.forEach(note);
        }
        if (dying != null) {
            dying.forEach(note);
        }
        Arrays.sort(delivered.values, 0, delivered.count);
        log.stopped(delivered.values, delivered.count);
    }

    /** A growing array of sequences. */
    private static final class Sequences {
        long[] values = new long[16];
        int count;

        void add(long sequence) {
            if (count == values.length) {
                values = Arrays.copyOf(values, count * 2);
            }
            values[count++] = sequence;
        }
    }

    /**
     * Copies every logged message, waiting or unsettled, whose location is before {@code location} forward in the
     * log (see {@link QueueLog#relocate}); those read back to be copied are paged out again once the copies are
     * written.
     *
     * @return how many were copied
     */
    int relocate(long location) {
        int count = 0;
        if (log != null && !status.gone()) {
            int[] copies = new int[1];
            Consumer<QueueEntry> relocate = entry -> copies[0] += paging.relocate(entry, location) ? 1 : 0;
            waiting.forEach(relocate);
            for (QueueConsumer consumer : consumers.all) {
                consumer.unsettled.forEach(relocate);
            }
            if (dying != null) {
                copies[0] += dying.relocate(paging, location);
            }
            count = copies[0] + waiting.relocateTails(location, log);
        }
        if (paging.hasCandidates()) {
            // messages read back to be copied go out again once the copies are written, traffic or not
            log.whenWritten(() -> executor.execute(this::pageOutIdle));
        }
        gauges.memoryBytes = waiting.bytes();
        return count;
    }

    private void pageOutIdle() {
        if (!status.gone()) {
            paging.pageOut();
            gauges.memoryBytes = waiting.bytes();
        }
    }
}
