package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * How messages leave a queue for good: forgotten (off the log, released, a held confirm refused) or dying
 * (dead-lettered through the queue's {@link DeadLetters} when it has a dead-letter exchange, forgotten otherwise).
 *
 * <p>Runs on the queue's thread, as every part of a {@link ClassicQueue}; it holds no state of its own.
 */
final class Departures {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    private final String name;
    /** The queue's arguments in effect: its declaration's, with its policy's ({@link #use}). */
    private QueueArguments arguments;
    /** Null for a queue that keeps nothing on disk. */
    private final QueueLog log;
    private final DeadLetters deadLetters;
    private final QueueStatus status;
    /** A quorum queue's dead-lettering at least once, when its arguments ask for it; else null. */
    private AtLeastOnceDeadLetters atLeastOnce;

    Departures(String name, QueueArguments arguments, QueueLog log, DeadLetters deadLetters, QueueStatus status) {
        this.name = name;
        this.arguments = arguments;
        this.log = log;
        this.deadLetters = deadLetters;
        this.status = status;
    }

    /**
     * The entry leaves the queue for good: off the log (unless the whole queue is being deleted) and released. A
     * confirm still held for a consumer is refused: the message left without being consumed.
     */
    void forget(QueueEntry entry) {
        PublishConfirm confirm = entry.takeConfirm();
        if (confirm != null && !status.closed) {
            confirm.refused();
        }
        if (entry.location() >= 0 && !status.gone()) {
            log.remove(entry.sequence, entry.location());
        }
        if (entry.message != null) {
            entry.message.release();
        }
    }

    /**
     * A waiting or settled entry dies: dead-lettered with {@code reason} when the queue has a dead-letter exchange,
     * dropped otherwise; gone from the queue either way.
     */
    void die(QueueEntry entry, DeadLetters.Reason reason) {
        if (atLeastOnce != null && reason != DeadLetters.Reason.MAXLEN) {
            atLeastOnce.take(entry, reason, false); // it stays in the queue until its dead-letter queues have it
            return;
        }
        if (arguments.deadLetters() && entry.message == null) {
            try {
                entry.message = log.read(entry.sequence, entry.location());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': message {1} dies ({2}) without being "
                    + "dead-lettered: it cannot be read back", name, entry.sequence, reason.value(), e);
            }
        }
        if (!arguments.deadLetters() || entry.message == null) {
            forget(entry);
            return;
        }
        Message message = entry.message.retain();
        forget(entry);
        deadLetter(message, reason, entry.deliveryCount);
    }

    /**
     * Hands one reference of a dying message to the dead-letter exchange, or releases it when there is none; the
     * copy keeps {@code deliveryCount}.
     */
    void deadLetter(Message message, DeadLetters.Reason reason, long deliveryCount) {
        if (!arguments.deadLetters()) {
            message.release();
            return;
        }
        try {
            deadLetters.deadLetter(message, reason, name, arguments, deliveryCount);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': a message dead-lettered ({1}) is lost", name,
                reason.value(), e);
        }
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }

    /** Dying messages go to {@code dying} from now (null: at most once). */
    void atLeastOnce(AtLeastOnceDeadLetters dying) {
        this.atLeastOnce = dying;
    }
}
