package io.skiffmq.core.publish;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.filter.SubscriptionFilter;
import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Handoff;
import io.skiffmq.core.queue.ForwardedConfirm;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Router;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One publishing client's way into a virtual host (an AMQP 1.0 link, a 0-9-1 channel): routes each message through
 * its exchange to its queues, alternate exchanges included, says when it went nowhere, and counts confirms across
 * the queues it went to, so the protocol hears once per message, when every queue has it as safe as promised
 * (durable ones once synced).
 *
 * <p>Owned by one thread, the {@code owner} given at creation (the connection's event loop): {@link #publish} is
 * called there, and {@link Confirms} are told there. Queues confirm from their own threads and the journal's
 * writer; those confirms reach the owner through a {@link Handoff}, one task per batch, and are reported as ranges
 * of tags.
 */
public final class Publisher {
    /** What the protocol hears of confirms, on the owner's thread. */
    public interface Confirms {
        /** The messages published with tags {@code firstTag..lastTag} (as the caller numbered them) are confirmed. */
        void confirmed(long firstTag, long lastTag);

        /**
         * The messages published with tags {@code firstTag..lastTag} were refused by a queue they went to (its log
         * failed, a limit refused them): 0-9-1's {@code basic.nack}, AMQP 1.0's {@code rejected}.
         */
        void rejected(long firstTag, long lastTag);

        /** The message published with {@code tag} was refused because {@code queue} is unavailable. */
        default void unavailable(long tag, String queue) {
            rejected(tag, tag);
        }

        /** Runs after each batch of confirms (to write them out, to grant more credit). */
        void batchEnd();
    }

    /** Where a message went. */
    public enum Routed {
        /** To at least one queue. */
        ROUTED,
        /** Nowhere: no binding matched, and no alternate exchange took it (0-9-1 returns it when mandatory). */
        UNROUTED
    }

    private final VirtualHost vhost;
    private final Confirms confirms;
    private final Handoff<Pending> handoff;
    static final int SPARE_LIMIT = 256;
    private final Router router = new Router();
    private final List<Queue> routed = new ArrayList<>();
    /**
     * {@link Pending}s whose every queue has answered, for the next messages: a confirm record per message would be
     * 32 bytes of garbage each. At most {@link #SPARE_LIMIT}, so a publisher holds little after a burst.
     */
    private Pending[] spare = new Pending[16];
    private int spareCount;
    /** Tags confirmed, and refused, in the batch being drained. */
    private final TagBatch confirmedBatch = new TagBatch();
    private final TagBatch refusedBatch = new TagBatch();
    /** Tags refused in the batch because a queue was unavailable, and that queue's name, in pairs; rare. */
    private final List<Object> unavailableBatch = new ArrayList<>();
    /** The last queue seen holding its publishers back when this one published to it; null when none was. */
    private Queue heldBy;
    private int unconfirmed;
    private boolean closed;
    private final ConnectionCounters counters;
    /** The publishing connection ({@link #from}), or null. */
    private Object connection;

    public Publisher(VirtualHost vhost, QueueExecutor owner, Confirms confirms) {
        this(vhost, owner, confirms, new ConnectionCounters(BrokerCounters.AMQP10));
    }

    /**
     * @param counters the publishing connection's: messages received, routed and confirmed are counted there (the
     *        caller counts the unroutable ones, as it decides whether they are returned)
     */
    public Publisher(VirtualHost vhost, QueueExecutor owner, Confirms confirms, ConnectionCounters counters) {
        this.vhost = vhost;
        this.confirms = confirms;
        this.counters = counters;
        this.handoff = new Handoff<>(owner, this::queueConfirmed, this::endBatch);
    }

    /**
     * Routes a message published to its {@link Message#exchange()} with its {@link Message#routingKey()} and the
     * keys its CC and BCC headers name ({@link Message#headerRoutes}); the queues get it without its BCC header.
     *
     * @param message one reference, which this takes over whatever happens
     * @param tag the caller's number for the message, reported back when it is confirmed; negative when nobody
     *        waits for a confirm (pre-settled, no confirm mode)
     * @throws BrokerException NOT_FOUND when the exchange does not exist, ACCESS_REFUSED when it is internal,
     *         PRECONDITION_FAILED (0-9-1) or INVALID (AMQP 1.0) for a CC or BCC header that is no list
     * @throws IllegalArgumentException when a headers exchange meets headers that do not decode
     */
    public Routed publish(Message message, long tag) {
        counters.received(tag >= 0);
        List<Queue> queues;
        List<String> moreKeys;
        try {
            Exchange exchange = vhost.exchange(message.exchange());
            if (exchange == null) {
                throw new BrokerException(Kind.NOT_FOUND, "no exchange '" + message.exchange() + "'");
            }
            if (exchange.internal()) {
                throw new BrokerException(Kind.ACCESS_REFUSED, "cannot publish to internal exchange '"
                    + exchange.name() + "'");
            }
            moreKeys = message.headerRoutes();
            queues = vhost.route(exchange, message.routingKey(), moreKeys, message, router, routed);
        } catch (RuntimeException e) {
            message.release();
            throw e;
        }
        return toQueues(message, queues, moreKeys, tag);
    }

    /**
     * Publishes a message to one queue without routing it (it was routed on the node it was published to, and
     * keeps the exchange and routing key it had there: docs/cluster.md, "Messages between nodes").
     *
     * @return UNROUTED when there is no such queue here
     */
    public Routed publishTo(String queueName, Message message, long tag) {
        return publishTo(queueName, message, tag, 0, -1, false);
    }

    /**
     * As {@link #publishTo(String, Message, long)}, with the forwarding node's number for the message, so that a
     * replicated queue drops it when it is resent and already there ({@link ForwardedConfirm}).
     *
     * @param number the node's number for the message in that queue; negative for none
     */
    public Routed publishTo(String queueName, Message message, long tag, long enqueuer, long number,
            boolean resent) {
        counters.received(tag >= 0);
        Queue queue = vhost.queue(queueName);
        routed.clear();
        if (queue != null) {
            routed.add(queue);
        }
        return toQueues(message, routed, null, tag, enqueuer, tag < 0 ? -1 : number, resent);
    }

    private Routed toQueues(Message message, List<Queue> queues, List<String> moreKeys, long tag) {
        return toQueues(message, queues, moreKeys, tag, 0, -1, false);
    }

    /** @param number a forwarding node's number for the message, with its enqueuer id; negative for none */
    private Routed toQueues(Message message, List<Queue> queues, List<String> moreKeys, long tag, long enqueuer,
            long number, boolean resent) {
        if (queues.isEmpty()) {
            message.release();
            return Routed.UNROUTED;
        }
        if (moreKeys != null) {
            message = withoutBcc(message);
        }
        counters.routed();
        if (!SubscriptionFilter.retainAccepting(message, queues, connection)) {
            // routed, and every queue it reached filtered it out (topic subscriptions' selectors, no-local):
            // delivered to no one, successfully
            message.release();
            if (tag >= 0) {
                unconfirmed++;
                pending(tag, 1).run();
            }
            return Routed.ROUTED;
        }
        Pending pending = null;
        if (tag >= 0) {
            pending = pending(tag, queues.size());
            unconfirmed++;
        }
        for (int i = 0; i < queues.size(); i++) {
            Queue queue = queues.get(i);
            if (queue.holdsPublishers()) {
                heldBy = queue;
            }
            queue.publish(message.retain(), number < 0 ? pending
                : new ForwardedConfirm(pending, enqueuer, number, resent));
        }
        message.release();
        return Routed.ROUTED;
    }

    /**
     * The message without its BCC header (a new one, when it had it): takes over {@code message}'s reference and
     * returns one.
     */
    public static Message withoutBcc(Message message) {
        Message stripped;
        try {
            stripped = message.withoutBcc();
        } catch (RuntimeException e) {
            message.release();
            throw e;
        }
        if (stripped != message) {
            message.release();
        }
        return stripped;
    }

    /**
     * Names the connection this publisher publishes for (any object standing for it), so that a no-local
     * subscription on it can leave its messages out; by its owner, before its first publish.
     */
    public Publisher from(Object publishingConnection) {
        this.connection = publishingConnection;
        return this;
    }

    /**
     * True when a queue this publisher sent to holds its publishers back ({@link Queue#holdPublisher}): the
     * protocol then takes nothing more (no link credit, no reads) until {@code resume} runs, once, on any thread.
     * False when none does, and {@code resume} is dropped. Asked once per batch of credit, not per message.
     */
    public boolean heldBack(Runnable resume) {
        Queue queue = heldBy;
        if (queue == null) {
            return false;
        }
        if (queue.holdPublisher(resume)) {
            return true;
        }
        heldBy = null;
        return false;
    }

    /** Messages published with a tag and not confirmed yet. */
    public int unconfirmed() {
        return unconfirmed;
    }

    /** The client is gone: confirms still to come are dropped. */
    public void close() {
        closed = true;
    }

    /** A confirm record for a message to {@code queues} queues: a spare one when there is one. */
    private Pending pending(long tag, int queues) {
        if (spareCount == 0) {
            return new Pending(this, tag, queues);
        }
        Pending pending = spare[--spareCount];
        spare[spareCount] = null;
        pending.reuse(tag, queues);
        return pending;
    }

    private void queueConfirmed(Pending pending) {
        if (--pending.remaining > 0 || closed) {
            return;
        }
        unconfirmed--;
        if (!pending.refused) {
            counters.confirmed(1);
        }
        // refused by any of its queues: refused, as RabbitMQ nacks it
        if (pending.unavailable != null) {
            unavailableBatch.add(pending.tag);
            unavailableBatch.add(pending.unavailable);
        } else {
            (pending.refused ? refusedBatch : confirmedBatch).add(pending.tag);
        }
        // every queue has answered, once each (PublishConfirm's contract): nobody refers to it any more
        if (spareCount < SPARE_LIMIT) {
            if (spareCount == spare.length) {
                spare = Arrays.copyOf(spare, spareCount * 2);
            }
            spare[spareCount++] = pending;
        }
    }

    private void endBatch() {
        if (closed || confirmedBatch.isEmpty() && refusedBatch.isEmpty() && unavailableBatch.isEmpty()) {
            confirmedBatch.clear();
            refusedBatch.clear();
            unavailableBatch.clear();
            return;
        }
        confirmedBatch.drain(confirms::confirmed);
        refusedBatch.drain(confirms::rejected);
        for (int i = 0; i < unavailableBatch.size(); i += 2) {
            confirms.unavailable((Long) unavailableBatch.get(i), (String) unavailableBatch.get(i + 1));
        }
        unavailableBatch.clear();
        confirms.batchEnd();
    }

    /** Tags gathered in one batch, reported sorted as ranges. */
    private static final class TagBatch {
        interface Ranges {
            void range(long first, long last);
        }

        private long[] tags = new long[64];
        private int size;

        void add(long tag) {
            if (size == tags.length) {
                tags = Arrays.copyOf(tags, size * 2);
            }
            tags[size++] = tag;
        }

        boolean isEmpty() {
            return size == 0;
        }

        void clear() {
            size = 0;
        }

        void drain(Ranges ranges) {
            Arrays.sort(tags, 0, size);
            int start = 0;
            for (int i = 1; i <= size; i++) {
                if (i == size || tags[i] != tags[i - 1] + 1) {
                    ranges.range(tags[start], tags[i - 1]);
                    start = i;
                }
            }
            size = 0;
        }
    }

    /**
     * A message waiting for its queues' confirms; each queue runs it (or refuses it) once, from its own thread. Reused
     * by its publisher for a later message once every queue has answered.
     */
    private static final class Pending implements PublishConfirm {
        private final Publisher publisher;
        /** Owned by the publisher's thread, as {@link #remaining}; queues see it set before their publish. */
        private long tag;
        /** Owned by the publisher's thread. */
        private int remaining;
        /** Set by a queue's thread before the handoff, read by the publisher's after it. */
        private boolean refused;
        /** The same: the queue that refused it as unavailable, or null. */
        private String unavailable;

        Pending(Publisher publisher, long tag, int queues) {
            this.publisher = publisher;
            this.tag = tag;
            this.remaining = queues;
        }

        void reuse(long tag, int queues) {
            this.tag = tag;
            this.remaining = queues;
            this.refused = false;
            this.unavailable = null;
        }

        @Override
        public void run() {
            publisher.handoff.offer(this);
        }

        @Override
        public void refused() {
            refused = true;
            publisher.handoff.offer(this);
        }

        @Override
        public void unavailable(String queue) {
            refused = true;
            unavailable = queue;
            publisher.handoff.offer(this);
        }
    }
}
