package io.skiffmq.core.queue;

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

    QueueRecovery(QueueLog log, QueueExecutor executor, QueueStatus status, WaitingMessages waiting, QueueLimits limits,
            QueueExpiry expiry, QueuePaging paging, QueueConsumers consumers, QueueGauges gauges) {
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
     * Puts back the messages recovered from the log, in sequence order: usually as an index only (a null message),
     * read back when dispatched. A recovered message may have been delivered before the restart, so it is marked as
     * acquired before.
     *
     * @param now the time of the restart (the time a message arrived is not logged: a TTL counts again from here)
     * @return the sequence after the last one recovered, or 0 for none
     */
    long restore(List<StoredMessage> messages, long now) {
        long nextSequence = 0;
        for (StoredMessage stored : messages) {
            QueueEntry entry = new QueueEntry(stored.sequence(), stored.message(), limits.lane(stored.priority()),
                stored.bodySize(), expiry.expiresAt(now, stored.ttl()));
            entry.deliveryCount = stored.deliveryCount();
            entry.acquiredBefore = true;
            entry.location = stored.location();
            waiting.arrive(entry);
            nextSequence = Math.max(nextSequence, stored.sequence() + 1);
        }
        gauges.ready = waiting.size();
        expiry.armTimer();
        return nextSequence;
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
