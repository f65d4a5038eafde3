package io.skiffmq.core.queue;

import io.skiffmq.core.time.BrokerClock;

/**
 * When a queue goes for being unused: an auto-delete queue once its last consumer left, a queue with
 * {@code x-expires} once unused that long (no consumer, no get, no redeclaration), by a timer. What going means is
 * the queue's unused action ({@link Queue#whenUnused}), which the virtual host gives it.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}: the timer fires on the queue's executor.
 */
final class UnusedQueue {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    private final String name;
    private final boolean autoDelete;
    /** {@code x-expires} (or a policy's {@code expires}) in milliseconds; negative when none. */
    private long expires;
    private final BrokerClock clock;
    private final QueueExecutor executor;
    private final QueueStatus status;
    /** The consumers pushed to: the queue is unused while there are none. */
    private final ConsumerRing consumers;
    /** When the queue was last used. */
    private long lastUsed;
    private BrokerClock.Timer timer;
    private boolean hadConsumer;
    private Runnable whenUnused;

    UnusedQueue(QueueDeclaration declaration, QueueArguments arguments, BrokerClock clock, QueueExecutor executor,
            QueueStatus status, ConsumerRing consumers) {
        this.name = declaration.name();
        this.autoDelete = declaration.autoDelete();
        this.expires = arguments.expires();
        this.clock = clock;
        this.executor = executor;
        this.status = status;
        this.consumers = consumers;
        this.lastUsed = clock.millis();
        if (expires >= 0) {
            executor.execute(this::armTimer);
        }
    }

    void whenUnused(Runnable action) {
        if (whenUnused != null) {
            throw new IllegalStateException("queue '" + name + "' has its unused action already");
        }
        whenUnused = action;
    }

    /** A consumer is pushed to: the queue is in use, and an auto-delete one goes when the last such leaves. */
    void consumerCame() {
        hadConsumer = true;
        disarm();
    }

    /** Deletes an auto-delete queue its last consumer left, and starts counting an {@code x-expires} queue unused. */
    void check() {
        if (!consumers.isEmpty() || status.deleted) {
            return;
        }
        if (hadConsumer && autoDelete && whenUnused != null) {
            whenUnused.run();
        } else if (expires >= 0) {
            used();
        }
    }

    /** Used now ({@code x-expires} counts from here): a consumer left, a get, a redeclaration. */
    void used() {
        lastUsed = clock.millis();
        if (expires >= 0 && consumers.isEmpty()) {
            armTimer();
        }
    }

    /**
     * A policy changed the expiry: it counts from now, as RabbitMQ restarts its expiry timer
     * ({@code rabbit_amqqueue_process:init_exp/2}).
     */
    void expires(long inEffect) {
        if (inEffect == expires) {
            return;
        }
        expires = inEffect;
        disarm();
        if (expires >= 0) {
            used();
        }
    }

    private void armTimer() {
        disarm();
        if (!status.gone() && consumers.isEmpty()) {
            timer = clock.schedule(lastUsed + expires, executor, this::timerFired);
        }
    }

    void disarm() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    private void timerFired() {
        timer = null;
        if (status.gone() || !consumers.isEmpty()) {
            return;
        }
        if (clock.millis() < lastUsed + expires) {
            armTimer(); // used again since the timer was armed
        } else if (whenUnused != null) {
            LOG.log(System.Logger.Level.DEBUG, "queue ''{0}'' expired unused after {1} ms", name, expires);
            whenUnused.run();
        }
    }
}
