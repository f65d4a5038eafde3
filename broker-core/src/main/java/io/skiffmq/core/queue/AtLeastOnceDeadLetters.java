package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.time.BrokerClock;
import java.util.ArrayDeque;

/**
 * A quorum queue's dead-lettering at least once ({@code x-dead-letter-strategy=at-least-once} with
 * {@code x-overflow=reject-publish}), as RabbitMQ 4.0's {@code rabbit_fifo_dlx} and its worker do it: a message that
 * dies leaves the queue's consumers but stays in the queue, and in its log, until every queue its dead-letter exchange
 * routes it to has confirmed its copy. When it cannot be routed (no such exchange, nothing bound, a target refusing
 * it) it is tried again every {@link DeadLetters#retryMillis}, as the worker tries again every
 * {@code dead_letter_worker_publisher_confirm_timeout}. A retry after some targets confirmed sends them a copy again:
 * duplicates are possible, losses are not. {@code maxlen} deaths never come here (a {@code reject-publish} queue
 * drops nothing), as {@code rabbit_fifo_dlx:discard/4} takes every other reason.
 *
 * <p>Each message held is marked in the log ({@link QueueLog#deadLettering}), so a restart gives it back here, as
 * RabbitMQ's discards are in its Raft log.
 *
 * <p>The messages held count towards the queue's length limits ({@link #count}, {@link #bodyBytes}), as
 * {@code rabbit_fifo:is_over_limit/1} counts its discards, but not as ready.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}; the confirms of the copies come back on
 * any thread and hop to it.
 */
final class AtLeastOnceDeadLetters {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    private final String name;
    private final QueueExecutor executor;
    private final BrokerClock clock;
    private final DeadLetters deadLetters;
    private final QueueStatus status;
    private final Departures departures;
    /** Null for a queue that keeps nothing on disk. */
    private final QueueLog log;
    /** The queue's arguments in effect ({@link #use}). */
    private QueueArguments arguments;
    /** Messages whose last try found no route, oldest first: tried again when {@link #retry} fires. */
    private final ArrayDeque<Dying> waiting = new ArrayDeque<>();
    /** Every message held, waiting or being tried. */
    private final java.util.Set<Dying> held = new java.util.LinkedHashSet<>();
    private BrokerClock.Timer retry;
    private int count;
    private long bodyBytes;

    /** A message being dead-lettered, with why it died. */
    private static final class Dying {
        final QueueEntry entry;
        final DeadLetters.Reason reason;

        Dying(QueueEntry entry, DeadLetters.Reason reason) {
            this.entry = entry;
            this.reason = reason;
        }
    }

    AtLeastOnceDeadLetters(String name, QueueExecutor executor, BrokerClock clock, DeadLetters deadLetters,
            QueueStatus status, Departures departures, QueueLog log, QueueArguments arguments) {
        this.name = name;
        this.executor = executor;
        this.clock = clock;
        this.deadLetters = deadLetters;
        this.status = status;
        this.departures = departures;
        this.log = log;
        this.arguments = arguments;
    }

    /** Messages held until their dead-lettering is confirmed. */
    int count() {
        return count;
    }

    /** Their body bytes, for {@code x-max-length-bytes}. */
    long bodyBytes() {
        return bodyBytes;
    }

    /**
     * Takes a dying entry, gone from the queue's waiting and unsettled messages, and dead-letters it; its log records
     * that it waits here ({@link QueueLog#deadLettering}) unless it is {@code recovered} so.
     */
    void take(QueueEntry entry, DeadLetters.Reason reason, boolean recovered) {
        if (!recovered && entry.location() >= 0) {
            log.deadLettering(entry.sequence, entry.location(), reason);
        }
        count++;
        bodyBytes += entry.bodySize;
        Dying dying = new Dying(entry, reason);
        held.add(dying);
        send(dying);
    }

    private void send(Dying dying) {
        QueueEntry entry = dying.entry;
        if (entry.message == null) {
            try {
                entry.message = log.read(entry.sequence, entry.location());
            } catch (QueueLog.Unreadable e) {
                LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': message {1} dies ({2}) without being "
                    + "dead-lettered: it cannot be read back", name, entry.sequence, dying.reason.value(), e);
                settled(dying);
                return;
            } catch (RuntimeException e) {
                waitForRetry(dying); // the log cannot read now: later
                return;
            }
        }
        deadLetters.deadLetter(entry.message.retain(), dying.reason, name, arguments, entry.deliveryCount,
            taken -> executor.execute(() -> confirmed(dying, taken)));
    }

    private void confirmed(Dying dying, boolean taken) {
        if (status.gone()) {
            departures.forget(dying.entry); // released; a closed queue's log keeps it
            return;
        }
        if (taken) {
            settled(dying);
        } else {
            waitForRetry(dying);
        }
    }

    /** Every target has it: it leaves the queue, and its log. */
    private void settled(Dying dying) {
        held.remove(dying);
        count--;
        bodyBytes -= dying.entry.bodySize;
        departures.forget(dying.entry);
    }

    private void waitForRetry(Dying dying) {
        if (status.gone()) {
            departures.forget(dying.entry); // released; a closed queue's log keeps it
            return;
        }
        // a replicated queue's log reads nothing back (its replicas keep the bytes): the message stays in memory
        if (dying.entry.message != null && dying.entry.location() >= 0 && log.isWritten(dying.entry.location())) {
            dying.entry.message.release(); // the log has it: nothing held in memory while it waits
            dying.entry.message = null;
        }
        waiting.add(dying);
        if (retry == null) {
            retry = clock.schedule(clock.millis() + deadLetters.retryMillis(), executor, this::retry);
        }
    }

    /** Tries again every message that found no route. */
    private void retry() {
        retry = null;
        if (status.gone()) {
            return;
        }
        for (int n = waiting.size(); n > 0; n--) {
            send(waiting.poll());
        }
    }

    /**
     * The queue is deleted or closed: every message held is let go of ({@link Departures#forget}: off the log only
     * while the queue is not gone, so a closed queue's come back after a restart, still held).
     */
    void clear() {
        if (retry != null) {
            retry.cancel();
            retry = null;
        }
        for (Dying dying : waiting) {
            departures.forget(dying.entry);
        }
        waiting.clear();
        held.clear();
        count = 0;
        bodyBytes = 0;
    }

    /** Each entry held. */
    void forEach(java.util.function.Consumer<QueueEntry> action) {
        for (Dying dying : held) {
            action.accept(dying.entry);
        }
    }

    /**
     * Copies the held messages logged before {@code location} forward ({@link QueuePaging#relocate}), each with its
     * record that it waits to be dead-lettered, which the reclaimed stretch held.
     */
    int relocate(QueuePaging paging, long location) {
        int copied = 0;
        for (Dying dying : held) {
            if (paging.relocate(dying.entry, location)) {
                log.deadLettering(dying.entry.sequence, dying.entry.location(), dying.reason);
                copied++;
            }
        }
        return copied;
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }
}
