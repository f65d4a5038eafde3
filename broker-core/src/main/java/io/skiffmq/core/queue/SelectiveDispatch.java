package io.skiffmq.core.queue;

import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Message;
import java.util.Arrays;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Dispatch to consumers with a selector (JMS message selectors on queue consumers, Artemis' semantics): such a
 * consumer gets the first waiting message its selector matches; the messages it skips stay where they are, in
 * order, for other consumers. Consumers without a selector never come here: their path (the head) is unchanged.
 *
 * <p>Costs and bounds. A skipped message is not looked at again by the same consumer: each consumer keeps, per
 * priority lane, a cursor (the highest arrival sequence it looked at and did not want; arrivals are in sequence
 * order within a lane), so its selector is evaluated once per message; given-back messages (released, modified)
 * are looked at again only when more were given back since it last wanted none of them. The entries before the cursor are still walked (no evaluation). A dispatch evaluates at
 * most {@link #EVALUATIONS_PER_DISPATCH} selectors per consumer; a consumer that ran out has another dispatch asked
 * for after the turn, so a long backlog is scanned across turns and the event loop stays responsive.
 *
 * <p>Paging: a waiting message paged out to the log (over the memory limit without page files, or recovered at
 * start) is read back to be looked at, and let go again unless wanted; each consumer reads it once. Paged tails
 * ({@link PagedTail}) are not read: they come back in memory as the head drains, as for every consumer, so a selector
 * consumer sees the part of the backlog in memory and in the log, not what waits in page files (docs/selectors.md).
 *
 * <p>Owned by the queue's thread.
 */
final class SelectiveDispatch {
    /**
     * Selector evaluations per consumer per dispatch. {@code SelectorBenchmark} measured about 0.2 µs for one
     * equality and 1.3 µs for a four-part selector on an AMQP 1.0 message (properties read in place; one noisy
     * run on a shared machine), so 4096 bound one consumer's share of a turn to about 1 to 5 ms: the scale of a
     * busy loop's other work per turn, while a backlog of 100,000 skipped messages is looked through in 25 turns.
     */
    static final int EVALUATIONS_PER_DISPATCH = 4096;

    private final WaitingMessages waiting;
    private final BiFunction<QueueConsumer, QueueEntry, QueueDelivery> deliver;
    private final Function<QueueEntry, Message> readBack;
    private final Runnable dispatchAgain;
    /** Counts dispatches: a consumer's budget is renewed on the first offer of each. */
    private long dispatch;
    /** A consumer ran out of budget in this dispatch: another is asked for when it ends. */
    private boolean again;
    /** A selector consumer was offered a message in this dispatch, when the waiting messages' changes were these. */
    private boolean offered;
    private long seen;
    private final Scan scan = new Scan();

    /**
     * @param deliver hands an entry to a consumer (the queue's own delivery: credit, tags, unsettled)
     * @param readBack reads a paged-out entry's message back from the log (a new reference; throws when it cannot)
     * @param dispatchAgain asks for one more dispatch after the queue's turn
     */
    SelectiveDispatch(WaitingMessages waiting, BiFunction<QueueConsumer, QueueEntry, QueueDelivery> deliver,
            Function<QueueEntry, Message> readBack, Runnable dispatchAgain) {
        this.waiting = waiting;
        this.readBack = readBack;
        this.deliver = deliver;
        this.dispatchAgain = dispatchAgain;
    }

    /**
     * A dispatch ended (tails read back included): budgets are renewed for the next one, which is asked for now if
     * a consumer ran out of its budget in this one, or if messages came into memory after selector consumers last
     * looked (a tail read back as others drained the head). Not from inside the dispatch: an executor without turns
     * would run it there and then.
     */
    void dispatched() {
        dispatch++;
        boolean more = again || offered && waiting.changes() != seen;
        again = false;
        offered = false;
        if (more) {
            dispatchAgain.run();
        }
    }

    /**
     * Offers a selector consumer (that has room) the first waiting message it wants; a {@link ConsumerRing.Offer}.
     *
     * @param now the time the dispatch judges expiry by ({@link QueueDispatcher#dispatch(long)})
     */
    int offer(QueueConsumer consumer, long now) {
        int result = offerOnce(consumer, now);
        offered = true;
        seen = waiting.changes();
        return result;
    }

    private int offerOnce(QueueConsumer consumer, long now) {
        if (consumer.foundNothingAt == waiting.changes()) {
            // it looked through everything and nothing came since: the ring offers it a turn per message others
            // take, and walking the backlog up to its cursor each time would cost as much as the dispatch itself
            return ConsumerRing.Offer.NONE;
        }
        PrefetchLimit limit = consumer.channelLimit;
        if (limit != null && !limit.tryAcquire(consumer)) {
            return ConsumerRing.Offer.NONE; // the channel is at its limit: this consumer waits to be resumed
        }
        QueueEntry entry = scan.start(consumer, now).run();
        if (entry == null) {
            QueueDispatcher.releaseSlots(consumer, 1);
            if (scan.exhausted()) {
                again = true; // the rest of the backlog in a later turn
            } else {
                consumer.foundNothingAt = waiting.changes();
            }
            return ConsumerRing.Offer.NONE;
        }
        if (entry.message == null) {
            entry.message = scan.takeLoaded(); // read back to be looked at: it goes out now
        }
        consumer.sink.deliver(deliver.apply(consumer, entry));
        return ConsumerRing.Offer.DONE;
    }

    /** One consumer's look through the waiting messages. */
    final class Scan {
        private QueueConsumer consumer;
        private Selector selector;
        private long now;
        /** The message of the paged-out entry wanted last, read back; null when none. */
        private Message loaded;

        Scan start(QueueConsumer c, long dispatchNow) {
            consumer = c;
            selector = c.selector;
            now = dispatchNow;
            if (c.budgetDispatch != dispatch) {
                c.budgetDispatch = dispatch;
                c.budget = EVALUATIONS_PER_DISPATCH;
            }
            return this;
        }

        QueueEntry run() {
            return waiting.removeFirstWanted(this);
        }

        boolean exhausted() {
            return consumer.budget <= 0;
        }

        /**
         * True when the consumer wants the entry: not expired, and its selector matches. A paged-out entry's message
         * is read back to be looked at, kept for {@link #takeLoaded} when wanted and let go otherwise; one that
         * cannot be read is not wanted (it is dealt with when it reaches the head).
         */
        boolean wants(QueueEntry entry) {
            if (entry.expiresAt() < now || !waiting.deliverable(entry)) {
                return false;
            }
            consumer.budget--;
            if (entry.message != null) {
                return selector.matches(entry.message);
            }
            Message message;
            try {
                message = readBack.apply(entry);
            } catch (RuntimeException e) {
                return false;
            }
            if (selector.matches(message)) {
                loaded = message;
                return true;
            }
            message.release();
            return false;
        }

        Message takeLoaded() {
            Message m = loaded;
            loaded = null;
            return m;
        }

        /** How many entries had been given back when the consumer last found none it wanted among them. */
        long returnedSeen() {
            return consumer.returnedSeen;
        }

        void returnedSeen(long putBacks) {
            consumer.returnedSeen = putBacks;
        }

        /** Arrivals of lane {@code lane} up to this sequence were looked at and are not wanted. */
        long cursor(int lane) {
            long[] cursors = consumer.cursors;
            return cursors == null || lane >= cursors.length ? -1 : cursors[lane];
        }

        void advance(int lane, long sequence) {
            long[] cursors = consumer.cursors;
            if (cursors == null || lane >= cursors.length) {
                int old = cursors == null ? 0 : cursors.length;
                cursors = cursors == null ? new long[lane + 1] : Arrays.copyOf(cursors, lane + 1);
                Arrays.fill(cursors, old, cursors.length, -1);
                consumer.cursors = cursors;
            }
            cursors[lane] = sequence;
        }
    }
}
