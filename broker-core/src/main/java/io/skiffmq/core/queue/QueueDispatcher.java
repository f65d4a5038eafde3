package io.skiffmq.core.queue;

import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.time.BrokerClock;

/**
 * Hands a queue's waiting messages to its push consumers: by priority, round robin among equals
 * ({@link ConsumerRing}), each within its credit (AMQP 1.0), prefetch and channel-wide prefetch (0-9-1); consumers
 * with a selector through {@link SelectiveDispatch}. Publishes and settlements do not dispatch each: they ask for one
 * dispatch after the executor's turn ({@link QueueExecutor#afterTurn}), so a burst of them costs one pass over the
 * consumers. Each dispatch ends with the queue's upkeep: expired heads, paged tails read back, paging out to the log,
 * publisher flow, the gauges.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}.
 */
final class QueueDispatcher {
    private final QueueExecutor executor;
    private final WaitingMessages waiting;
    private final BrokerClock clock;
    /** Null for a queue that keeps nothing on disk. */
    private final QueueLog log;
    private final QueueCounters counters;
    private final ConsumerRing consumers;
    private final PublisherFlow publisherFlow;
    private final QueueExpiry expiry;
    private final QueuePaging paging;
    private final Departures departures;
    private final QueueGauges gauges;
    /** Dispatch to consumers with a selector; those without one never use it. */
    private final SelectiveDispatch selective;
    /** A dispatch is asked for after this turn ({@link #dispatchAfterTurn}). */
    private boolean pending;
    /** The time the current dispatch judges expiry by: read once per dispatch, not per message. */
    private long now;
    private final Runnable task = this::afterTurnRuns;
    private final ConsumerRing.Offer offer = this::offer;

    /** A quorum queue's deliveries tell their {@link QueueEntry#returns} ({@link QueueDelivery#returns}). */
    private final boolean tellsReturns;

    QueueDispatcher(QueueExecutor executor, WaitingMessages waiting, BrokerClock clock, QueueLog log,
            QueueCounters counters, ConsumerRing consumers, PublisherFlow publisherFlow,
            QueueExpiry expiry, QueuePaging paging, Departures departures, QueueGauges gauges, boolean tellsReturns) {
        this.tellsReturns = tellsReturns;
        this.executor = executor;
        this.waiting = waiting;
        this.clock = clock;
        this.log = log;
        this.counters = counters;
        this.consumers = consumers;
        this.publisherFlow = publisherFlow;
        this.expiry = expiry;
        this.paging = paging;
        this.departures = departures;
        this.gauges = gauges;
        this.selective = new SelectiveDispatch(waiting, this::deliver, e -> log.read(e.sequence, e.location()),
            this::dispatchAfterTurn);
    }

    /** A dispatch was asked for after this turn and has not run yet. */
    boolean pending() {
        return pending;
    }

    /** Asks for one {@link #dispatch} once the executor's current turn is done, however often this turn asks. */
    void dispatchAfterTurn() {
        if (!pending) {
            pending = true;
            executor.afterTurn(task);
        }
    }

    /** The dispatch asked for, if it has not run yet (at the end of the turn, or of a batch of publishes). */
    void afterTurnRuns() {
        if (pending) {
            dispatch();
        }
    }

    /** Hands out messages while some consumer has room: by priority, round robin among equals. */
    void dispatch() {
        dispatch(clock.millis());
    }

    /**
     * {@link #dispatch} with the time a message just published was stamped with: one with a TTL of 0 expires at that
     * very millisecond, and the consumers that have room must get it even if the clock has moved on since (it had,
     * for 8 of 500 such messages, and they were dropped with a consumer waiting: RabbitMQ's client suite's
     * {@code zeroTTLDelivery}).
     */
    void dispatch(long now) {
        assert executor.inExecutor();
        this.now = now;
        pending = false;
        boolean more = true;
        int taken = 0;
        while (more && !consumers.isEmpty() && !waiting.isEmpty()) {
            more = consumers.offer(offer) == ConsumerRing.Offer.DONE; // one message per offer
            if (more) {
                taken++;
            }
        }
        publisherFlow.dispatched(taken);
        expiry.expireHeads();
        waiting.readBack();
        selective.dispatched();
        gauges.ready = waiting.size();
        if (paging.hasCandidates()) {
            paging.pageOut();
        }
        gauges.memoryBytes = waiting.bytes();
        publisherFlow.update(waiting.footprint(), waiting.size(), !consumers.isEmpty());
    }

    /** Offers the next message this consumer may have to it. */
    private int offer(QueueConsumer consumer) {
        if (!consumer.hasRoom()) {
            return ConsumerRing.Offer.NONE;
        } else if (consumer.selector != null) {
            return selective.offer(consumer, now);
        }
        if (waiting.headUndeliverable()) {
            return ConsumerRing.Offer.STOP; // not committed yet: dispatched again once it is
        }
        QueueEntry entry = waiting.removeHead();
        if (entry == null) {
            return ConsumerRing.Offer.NONE;
        }
        if (entry.expiresAt() < now) {
            departures.die(entry, DeadLetters.Reason.EXPIRED); // expired before its turn came: never delivered
            return ConsumerRing.Offer.DONE;
        }
        if (consumer.channelLimit != null && !consumer.channelLimit.tryAcquire(consumer)) {
            waiting.giveBack(entry); // the channel is at its limit: this consumer waits to be resumed
            return ConsumerRing.Offer.NONE;
        }
        int loaded = paging.pageIn(entry);
        if (loaded == QueuePaging.NOT_NOW) {
            releaseSlots(consumer, 1);
            return ConsumerRing.Offer.STOP; // nothing delivered: dispatching stops for now
        }
        if (loaded == QueuePaging.LOADED) {
            consumer.sink.deliver(deliver(consumer, entry));
        } else {
            releaseSlots(consumer, 1);
        }
        return ConsumerRing.Offer.DONE;
    }

    /**
     * A get by a pull consumer (after the push consumers with room, as if each publish had dispatched), then the
     * upkeep a dispatch does after it.
     *
     * @param take false when nothing is to be taken (the queue or the consumer is gone)
     * @return the delivery, or null when there is none
     */
    QueueDelivery get(QueueConsumer consumer, boolean take) {
        if (pending) {
            dispatch();
        }
        QueueDelivery delivery = take ? pull(consumer) : null;
        if (delivery == null && !consumer.removed) {
            counters.foundEmpty();
        }
        expiry.expireHeads();
        waiting.readBack();
        gauges.ready = waiting.size();
        return delivery;
    }

    /**
     * A get: the first waiting message that has not expired (expired ones die on the way), to a pull consumer; null
     * when none waits, or when the one at the head cannot be read back from the log now.
     */
    private QueueDelivery pull(QueueConsumer consumer) {
        long now = clock.millis();
        while (true) {
            if (waiting.headUndeliverable()) {
                return null;
            }
            QueueEntry entry = waiting.removeHead();
            if (entry == null) {
                return null;
            }
            if (entry.expiresAt() < now) {
                departures.die(entry, DeadLetters.Reason.EXPIRED);
                continue;
            }
            int loaded = paging.pageIn(entry);
            if (loaded == QueuePaging.NOT_NOW) {
                return null;
            }
            if (loaded == QueuePaging.LOADED) {
                return deliver(consumer, entry, true);
            }
        }
    }

    /** Pushes {@code entry} to {@code consumer}: counted against its credit, and unsettled unless pre-settled. */
    QueueDelivery deliver(QueueConsumer consumer, QueueEntry entry) {
        return deliver(consumer, entry, false);
    }

    /**
     * Hands {@code entry} to {@code consumer}: counted against its credit, and unsettled unless pre-settled.
     *
     * @param get for a get, which tells how many messages remain ready; a push does not
     */
    private QueueDelivery deliver(QueueConsumer consumer, QueueEntry entry, boolean get) {
        if (consumer.flow.kind() == ConsumerFlow.Kind.CREDIT) {
            consumer.credit--;
            consumer.deliveryCount = SerialNumber.add(consumer.deliveryCount, 1);
        }
        long tag = consumer.nextTag++;
        boolean first = !entry.acquiredBefore;
        entry.acquiredBefore = true;
        Message message = entry.message;
        int remaining = get ? waiting.size() : 0;
        counters.delivered(consumer.flow.kind() == ConsumerFlow.Kind.PULL, consumer.preSettled, !first,
            message.size());
        if (consumer.preSettled) {
            // at-most-once: the queue forgets the message and its reference goes with the delivery
            if (entry.location() >= 0) {
                log.remove(entry.sequence, entry.location());
            }
            PublishConfirm confirm = entry.takeConfirm();
            if (confirm != null) {
                confirm.run(); // settled as it was sent: consumed
            }
            return QueueDelivery.of(message, tag, entry.deliveryCount, tellsReturns ? entry.returns : -1, first,
                remaining);
        }
        consumer.unsettled.add(tag, entry);
        gauges.unacked++;
        return QueueDelivery.of(message.retain(), tag, entry.deliveryCount, tellsReturns ? entry.returns : -1,
            first, remaining);
    }

    /** Gives back {@code count} of the consumer's channel-wide prefetch slots, if it takes any. */
    static void releaseSlots(QueueConsumer consumer, int count) {
        PrefetchLimit limit = consumer.channelLimit;
        if (limit != null && !consumer.preSettled) {
            limit.release(count);
        }
    }

    /** An AMQP 1.0 flow for a credit consumer: its new credit, used at once, drained when asked. */
    void credit(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        if (consumer.flow.kind() != ConsumerFlow.Kind.CREDIT) {
            throw new IllegalStateException("flow for a consumer paced by " + consumer.flow.kind());
        }
        // [2.6.7] link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)
        long receiverCount = deliveryCount < 0 ? 0 : deliveryCount;
        long credit = SerialNumber.diff(SerialNumber.add(receiverCount, linkCredit), consumer.deliveryCount);
        consumer.credit = Math.max(0, credit);
        consumer.drain = drain;
        dispatch();
        if (consumer.drain) {
            // [2.6.7] drain: use up the credit by advancing delivery-count, then say so
            consumer.deliveryCount = SerialNumber.add(consumer.deliveryCount, consumer.credit);
            consumer.credit = 0;
            consumer.drain = false;
            consumer.sink.creditState(consumer.deliveryCount, 0, waiting.size(), true);
        } else if (echo) {
            consumer.sink.creditState(consumer.deliveryCount, consumer.credit, waiting.size(), false);
        }
    }
}
