package io.skiffmq.server.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;

/**
 * One consumer of a {@link RemoteQueue}: a receiver link from the home node whose credit follows the consumer's
 * own (AMQP 1.0 credit as granted, a 0-9-1 prefetch as unsettled deliveries plus credit), whose deliveries are
 * numbered 0, 1, 2, … here as a local queue numbers them, and settled on the home node by dispositions. What it
 * has not settled when it goes, or when the connection is lost, the home node gets back (released).
 *
 * <p>Owned by its {@link PeerConnection}'s event loop.
 */
final class RemoteConsumer {
    /** Credit kept granted to a consumer that no prefetch limits (pre-settled, or a prefetch of 0). */
    static final int WINDOW = 256;
    /** The attach property RabbitMQ 4 reads a consumer's priority from. */
    static final String PRIORITY_PROPERTY = "rabbitmq:priority";
    private static final Accepted ACCEPTED = Accepted.getInstance();
    private static final Released RELEASED = Released.getInstance();

    final RemoteQueue queue;
    final ConsumerSink sink;
    private final ConsumerFlow flow;
    final boolean preSettled;
    /** Asked for the queue exclusively (0-9-1 {@code basic.consume} exclusive), and its priority (x-priority). */
    final boolean exclusive;
    final int priority;
    QueueConsumer handle;
    /** Null before the attach and after the link went. */
    Receiver receiver;
    private final TreeMap<Long, Delivery> unsettled = new TreeMap<>();
    private long nextTag;
    /** Deliveries handed to the sink, plus credit drained: the queue's delivery-count for this consumer. */
    private long deliveryCount;
    private boolean subscribed;
    private boolean cancelled;
    private boolean closed;
    private boolean draining;
    private CompletableFuture<QueueDelivery> getting;
    /** The channel's limit (0-9-1 {@code basic.qos} global), or null. */
    private PrefetchLimit channelLimit;
    /** A credit consumer's own credit as a delivery count (what its flows asked for), before the channel's limit. */
    private long creditUpTo;

    RemoteConsumer(RemoteQueue queue, ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority) {
        this.queue = queue;
        this.sink = sink;
        this.flow = flow;
        this.preSettled = preSettled;
        this.exclusive = exclusive;
        this.priority = priority;
        this.channelLimit = flow.channelLimit();
    }

    /**
     * What the channel's limit leaves this consumer unsettled and in credit together: its limit less what this
     * consumer holds. The home node sends no more than that. (The channel's other consumers' deliveries are not
     * counted: exact for one consumer per channel, docs/cluster.md.)
     */
    private long channelRoom() {
        PrefetchLimit limit = channelLimit;
        return limit == null || limit.limit() == 0 || preSettled ? Long.MAX_VALUE
            : Math.max(0, limit.limit() - unsettled.size());
    }

    /** Grants credit up to {@code wanted}, as far as the channel's limit goes. */
    private void grantUpTo(long wanted) {
        long allowed = Math.min(wanted, channelRoom());
        int current = receiver.getCredit();
        if (allowed > current) {
            receiver.flow((int) Math.min(Integer.MAX_VALUE, allowed - current));
        }
    }

    /** The channel's limit set after the consumer subscribed ({@code basic.qos} global). */
    void limit(PrefetchLimit limit) {
        channelLimit = limit;
    }

    boolean closed() {
        return closed;
    }

    private boolean windowed() {
        return flow.kind() == ConsumerFlow.Kind.PREFETCH && (preSettled || flow.prefetch() == 0);
    }

    /** The home node attached its end: the consumer is subscribed, and gets its first credit. */
    void attached() {
        if (closed || subscribed) {
            return;
        }
        subscribed = true;
        sink.subscribed();
        if (windowed()) {
            receiver.flow(WINDOW);
        } else if (flow.kind() == ConsumerFlow.Kind.PREFETCH) {
            grantUpTo(flow.prefetch());
        }
    }

    /** A whole delivery came: handed to the sink (or to the waiting get), or given back when cancelled. */
    void delivered(Delivery delivery) {
        byte[] bytes = new byte[delivery.pending()];
        receiver.recv(bytes, 0, bytes.length);
        receiver.advance();
        if (closed || cancelled && getting == null) {
            settle(delivery, RELEASED);
            return;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        Message message;
        long returns;
        boolean firstAcquirer;
        long failures;
        try {
            if (delivery.getMessageFormat() == NodeForm.AMQP_091) {
                NodeForm.Read read = NodeForm.read(buf);
                message = read.message();
                firstAcquirer = read.firstAcquirer();
                failures = read.deliveryCount();
                returns = read.returns();
            } else {
                MessageSections sections = MessageSections.scan(buf);
                firstAcquirer = sections.firstAcquirer();
                failures = sections.deliveryCount();
                returns = sections.messageAnnotation("x-delivery-count") instanceof Number n ? n.longValue() : 0;
                message = Amqp10Message.fromNode(buf, sections, queue.name());
            }
        } catch (AmqpDecodeException e) {
            buf.release();
            settle(delivery, new Rejected());
            return;
        } catch (MalformedMessageException e) {
            settle(delivery, new Rejected()); // released by the reader
            return;
        }
        long tag = nextTag++;
        deliveryCount++;
        if (delivery.remotelySettled() || preSettled) {
            delivery.settle();
        } else {
            unsettled.put(tag, delivery);
        }
        if (windowed() && receiver.getCredit() < WINDOW / 2) {
            receiver.flow(WINDOW - receiver.getCredit());
        }
        QueueDelivery handed = QueueDelivery.of(message, tag, failures, returns, firstAcquirer, 0);
        if (getting != null) {
            CompletableFuture<QueueDelivery> got = getting;
            getting = null;
            got.complete(handed);
        } else {
            sink.deliver(handed);
        }
    }

    /** The home node's flow: a drain asked for is done, or a get found nothing. */
    void flowed() {
        if (receiver == null || receiver.draining()) {
            return;
        }
        if (getting != null) {
            CompletableFuture<QueueDelivery> got = getting;
            getting = null;
            got.complete(null);
        }
        if (draining) {
            // a drain uses up the consumer's credit: its delivery-count moves on by what was left ([2.6.7])
            draining = false;
            deliveryCount = Math.max(deliveryCount, creditUpTo);
            sink.creditState(deliveryCount, 0, 0, true);
        }
    }

    void flow(long theirDeliveryCount, long linkCredit, boolean drain, boolean echo) {
        if (closed || receiver == null) {
            return;
        }
        long target = theirDeliveryCount < 0 ? linkCredit : theirDeliveryCount + linkCredit - deliveryCount;
        creditUpTo = deliveryCount + target;
        grantUpTo(target);
        if (drain) {
            draining = true;
            receiver.drain(0);
        } else if (echo) {
            sink.creditState(deliveryCount, Math.max(0, target), 0, false);
        }
    }

    void get(CompletableFuture<QueueDelivery> got) {
        if (closed || receiver == null) {
            got.complete(null);
            return;
        }
        getting = got;
        receiver.drain(1);
    }

    void cancel() {
        cancelled = true;
        if (receiver != null && !closed) {
            receiver.drain(0); // what the home node still sends comes back to it
        }
    }

    void settle(long firstTag, long lastTag, Outcome outcome) {
        if (closed || firstTag > lastTag) {
            return;
        }
        Map<Long, Delivery> range = unsettled.subMap(firstTag, true, lastTag, true);
        int settled = range.size();
        DeliveryState state = state(outcome);
        for (Delivery delivery : range.values()) {
            settle(delivery, state);
        }
        range.clear();
        if (settled > 0 && !cancelled && flow.kind() == ConsumerFlow.Kind.PREFETCH && !windowed()) {
            grantUpTo(flow.prefetch() - unsettled.size());
        } else if (settled > 0 && !cancelled && flow.kind() == ConsumerFlow.Kind.CREDIT && channelLimit != null) {
            grantUpTo(creditUpTo - deliveryCount); // room under the channel's limit again
        }
    }

    /** The consumer goes: what it has not settled is settled with {@code outcome}, and the link is detached. */
    void close(Outcome outcome) {
        if (closed) {
            return;
        }
        closed = true;
        DeliveryState state = state(outcome);
        unsettled.values().forEach(d -> settle(d, state));
        unsettled.clear();
        if (receiver != null) {
            receiver.close();
        }
        if (getting != null) {
            getting.complete(null);
            getting = null;
        }
    }

    /**
     * The link or the connection went from the home node's side (the queue deleted there, the node down): the
     * home node keeps what was not settled, and the consumer is told as for a deleted queue (0-9-1 basic.cancel).
     */
    void lost(String reason) {
        if (closed) {
            return;
        }
        closed = true;
        unsettled.clear();
        receiver = null;
        if (getting != null) {
            getting.complete(null);
            getting = null;
        }
        if (subscribed) {
            sink.queueDeleted();
        } else {
            sink.refused(reason);
        }
    }

    private static void settle(Delivery delivery, DeliveryState state) {
        delivery.disposition(state);
        delivery.settle();
    }

    private static DeliveryState state(Outcome outcome) {
        return switch (outcome.kind()) {
            case ACCEPTED -> ACCEPTED;
            case REJECTED -> new Rejected();
            case RELEASED -> RELEASED;
            case MODIFIED -> {
                Modified modified = new Modified();
                modified.setDeliveryFailed(outcome.deliveryFailed());
                modified.setUndeliverableHere(outcome.undeliverableHere());
                yield modified;
            }
        };
    }
}
