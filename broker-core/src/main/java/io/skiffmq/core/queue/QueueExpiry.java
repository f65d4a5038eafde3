package io.skiffmq.core.queue;

import io.skiffmq.core.time.BrokerClock;
import java.util.function.Consumer;

/**
 * Message TTL in a queue ({@code x-message-ttl}, and a message's own): when an arrival expires, the heads expired
 * as RabbitMQ expires them, and the timer that expires them in an idle queue.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}: the timer fires on the queue's executor.
 */
final class QueueExpiry {
    /** The queue's arguments in effect: its declaration's, with its policy's ({@link #use}). */
    private QueueArguments arguments;
    private final WaitingMessages waiting;
    private final BrokerClock clock;
    private final QueueExecutor executor;
    private final QueueStatus status;
    /** What becomes of an expired head: it dies. */
    private final Consumer<QueueEntry> expire;
    /** What the timer does when it fires: a dispatch, which expires the heads that are due. */
    private final Runnable fired;
    /** Some message arrived with a TTL of its own: heads may expire even without {@code x-message-ttl}. */
    private boolean hasMessageTtls;
    /** The timer that expires the heads, armed for the earliest head's expiry; null when none is armed. */
    private BrokerClock.Timer timer;
    private long timerAt = Long.MAX_VALUE;

    QueueExpiry(QueueArguments arguments, WaitingMessages waiting, BrokerClock clock, QueueExecutor executor,
            QueueStatus status, Consumer<QueueEntry> expire, Runnable fired) {
        this.arguments = arguments;
        this.waiting = waiting;
        this.clock = clock;
        this.executor = executor;
        this.status = status;
        this.expire = expire;
        this.fired = fired;
    }

    /** When a message arriving {@code now} with {@code messageTtl} (negative: none) expires: the shorter TTL. */
    long expiresAt(long now, long messageTtl) {
        hasMessageTtls |= messageTtl >= 0;
        long ttl = arguments.messageTtl();
        if (messageTtl >= 0 && (ttl < 0 || messageTtl < ttl)) {
            ttl = messageTtl;
        }
        return ttl < 0 ? Long.MAX_VALUE : now + ttl;
    }

    /**
     * When a message recovered from the log expires: when the log says, counting its TTL on across the restart as
     * RabbitMQ does (its queue index keeps each message's expiry), or, when the log did not record it, as if it
     * arrived {@code now}.
     */
    long restored(StoredMessage stored, long now) {
        if (stored.expiresAt() == StoredMessage.EXPIRY_UNKNOWN) {
            return expiresAt(now, stored.ttl());
        }
        hasMessageTtls |= stored.ttl() >= 0;
        return stored.expiresAt();
    }

    /** Some waiting message may expire. */
    boolean anyExpire() {
        return hasMessageTtls || arguments.messageTtl() >= 0;
    }

    /**
     * Expires the heads whose time has come (a message expiring {@code now} while a consumer has room was delivered
     * by then: a TTL of 0 means "only if a consumer takes it at once", as in RabbitMQ), and arms the timer for the
     * next head to expire, so an idle queue lets go of expired messages too.
     */
    void expireHeads() {
        if (!anyExpire()) {
            return;
        }
        waiting.expireHeads(clock.millis(), expire);
        armTimer();
    }

    void armTimer() {
        long next = waiting.nextHeadExpiry();
        if (next == Long.MAX_VALUE || next >= timerAt || status.gone()) {
            return;
        }
        if (timer != null) {
            timer.cancel();
        }
        timerAt = next;
        timer = clock.schedule(next, executor, this::timerFired);
    }

    void disarm() {
        if (timer != null) {
            timer.cancel();
            timer = null;
            timerAt = Long.MAX_VALUE;
        }
    }

    private void timerFired() {
        timer = null;
        timerAt = Long.MAX_VALUE;
        if (!status.gone()) {
            fired.run(); // expires the heads that are due and arms the timer again
        }
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }
}
