package io.skiffmq.server.amqp10;

import io.skiffmq.server.BrokerConfig;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.BrokerAnnotations;
import io.skiffmq.codec.amqp10.DeliveryEncoder;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.QueueDelivery;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Role;

/**
 * A session [2.5]: its windows and transfer ids, its links by handle, the delivery ids of what it sends, and the
 * dispositions it owes publishers. Sequence numbers use {@link SerialNumber} throughout. Our channel number is
 * the peer's.
 *
 * <p>Outgoing deliveries wait in {@link #outbound} while the peer's incoming window is closed [2.5.6]; a delivery
 * larger than the peer's max-frame-size goes out as several transfer frames, and may pause between them.
 *
 * <p>Owned by the connection's event loop; links' queues reach it through {@link #onLoop}.
 */
final class AmqpSession {
    private static final long MAX_WINDOW = 0xffffffffL;

    private final Amqp10ConnectionHandler connection;
    private final int channel;
    private final VirtualHost vhost;
    /** The authenticated user, for the permission checks to come. */
    private final String user;
    /** The peer's container-id: with a link name, it names a durable subscription. */
    private final String containerId;
    private final FrameWriter writer;
    private final EventLoop loop;

    private long nextIncomingId;
    private long incomingWindow;
    private long nextOutgoingId;
    private long remoteIncomingWindow;
    private long nextDeliveryId;

    private final Map<Long, Link> links = new HashMap<>();
    /** Link names, for pairing the two halves of the management node. */
    private final Map<Link, String> linkNames = new HashMap<>();
    /** Our unsettled deliveries, by delivery-id. */
    private final Map<Long, SentDelivery> unsettled = new HashMap<>();
    private final ArrayDeque<Outbound> outbound = new ArrayDeque<>();
    /** Delivery-ids of publishers' deliveries confirmed since the last flush. */
    private long[] accepted = new long[64];
    private int acceptedCount;

    private final TransferPerformative transferOut = new TransferPerformative();
    private final FlowPerformative flowOut = new FlowPerformative();
    private final DispositionPerformative dispositionOut = new DispositionPerformative();
    private final BrokerAnnotations annotations = new BrokerAnnotations();
    private final ByteBuf tag = Unpooled.buffer(4, 4);
    /** Routing state of this connection's thread, reused for every message the session's publishers send. */
    private final io.skiffmq.core.routing.Router router = new io.skiffmq.core.routing.Router();
    private final java.util.List<io.skiffmq.core.queue.Queue> routed = new ArrayList<>();

    AmqpSession(Amqp10ConnectionHandler connection, int channel, VirtualHost vhost, String user, String containerId) {
        this.connection = connection;
        this.channel = channel;
        this.vhost = vhost;
        this.user = user;
        this.containerId = containerId;
        this.writer = connection.writer();
        this.loop = connection.context().channel().eventLoop();
    }

    VirtualHost vhost() {
        return vhost;
    }

    String containerId() {
        return containerId;
    }

    io.skiffmq.core.routing.Router router() {
        return router;
    }

    /** The list {@link VirtualHost#route} fills for this session; valid until the next route. */
    java.util.List<io.skiffmq.core.queue.Queue> routed() {
        return routed;
    }

    BrokerConfig config() {
        return connection.config();
    }

    /** Runs {@code task} on this connection's event loop (inline when already there), then flushes. */
    void onLoop(Runnable task) {
        if (loop.inEventLoop()) {
            task.run();
            connection.flushLater();
        } else {
            loop.execute(() -> {
                task.run();
                connection.flushLater();
            });
        }
    }

    void writeFrame(Object performative) {
        writer.writeFrame(channel, performative);
    }

    // ---- session lifecycle [2.5] -------------------------------------------------------------------------

    void onBegin(Begin begin) {
        nextIncomingId = begin.getNextOutgoingId().longValue();
        remoteIncomingWindow = begin.getIncomingWindow().longValue();
        incomingWindow = config().sessionWindow();
        Begin reply = new Begin();
        reply.setRemoteChannel(org.apache.qpid.proton.amqp.UnsignedShort.valueOf((short) channel));
        reply.setNextOutgoingId(UnsignedInteger.valueOf(nextOutgoingId));
        reply.setIncomingWindow(UnsignedInteger.valueOf(incomingWindow));
        reply.setOutgoingWindow(UnsignedInteger.valueOf(MAX_WINDOW));
        writeFrame(reply);
    }

    void onEnd(End end) {
        closeAllLinks();
        writeFrame(new End());
    }

    /** Ends the session with an error (a session-scoped protocol violation). */
    void end(ErrorCondition error) {
        closeAllLinks();
        End end = new End();
        end.setError(error);
        writeFrame(end);
    }

    void closeAllLinks() {
        for (Link link : links.values()) {
            link.close(false);
        }
        links.clear();
        linkNames.clear();
        unsettled.clear();
        for (Outbound item : outbound) {
            item.discard();
        }
        outbound.clear();
    }

    // ---- links ---------------------------------------------------------------------------------------------

    void onAttach(Attach attach) {
        long handle = attach.getHandle().longValue();
        if (links.containsKey(handle)) {
            throw AmqpException.sessionError(AmqpError.HANDLE_IN_USE, "handle %d is in use", handle);
        }
        try {
            Link link;
            if (isManagement(attach)) {
                link = attach.getRole() == Role.SENDER ? ManagementRequestLink.attach(this, attach)
                    : ManagementResponseLink.attach(this, attach);
            } else {
                link = attach.getRole() == Role.SENDER ? IncomingLink.attach(this, attach)
                    : OutgoingLink.attach(this, attach);
            }
            links.put(handle, link);
            linkNames.put(link, attach.getName());
        } catch (AmqpException e) {
            if (e.scope() != AmqpException.Scope.LINK) {
                throw e;
            }
            // [2.6.3] refusing a link: attach with no terminus, then detach with the error
            Attach refusal = new Attach();
            refusal.setName(attach.getName());
            refusal.setHandle(attach.getHandle());
            refusal.setRole(attach.getRole() == Role.SENDER ? Role.RECEIVER : Role.SENDER);
            writeFrame(refusal);
            writeDetach(handle, true, new ErrorCondition(e.condition().symbol(), e.getMessage()));
        }
    }

    /** A link of the {@code /management} pair: the client's sender targets it, its receiver reads from it. */
    private static boolean isManagement(Attach attach) {
        if (attach.getRole() == Role.SENDER) {
            return attach.getTarget() instanceof org.apache.qpid.proton.amqp.messaging.Target t
                && "/management".equals(t.getAddress());
        }
        return attach.getSource() instanceof org.apache.qpid.proton.amqp.messaging.Source s
            && "/management".equals(s.getAddress());
    }

    /** The response half of the management pair named {@code name}, or null. */
    ManagementResponseLink managementResponses(String name) {
        for (Link link : links.values()) {
            if (link instanceof ManagementResponseLink r && name.equals(linkNames.get(link))) {
                return r;
            }
        }
        return null;
    }

    void onDetach(Detach detach) {
        long handle = detach.getHandle().longValue();
        Link link = links.remove(handle);
        if (link == null) {
            throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "detach of handle %d, which is not attached",
                handle);
        }
        linkNames.remove(link);
        forgetUnsettled(link);
        link.close(Boolean.TRUE.equals(detach.getClosed()));
        writeDetach(handle, Boolean.TRUE.equals(detach.getClosed()), null);
    }

    /** Detaches a link after a link-scoped error. */
    void detachWithError(long handle, ErrorCondition error) {
        Link link = links.remove(handle);
        if (link != null) {
            linkNames.remove(link);
            forgetUnsettled(link);
            link.close(false);
        }
        writeDetach(handle, true, error);
    }

    private void writeDetach(long handle, boolean closed, ErrorCondition error) {
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(handle));
        detach.setClosed(closed);
        detach.setError(error);
        writeFrame(detach);
    }

    private void forgetUnsettled(Link link) {
        unsettled.values().removeIf(d -> d.link == link);
    }

    // ---- flow [2.5.6, 2.6.7] -------------------------------------------------------------------------------

    void onFlow(FlowPerformative flow) {
        // [2.5.6] remote-incoming-window = next-incoming-id(flow) + incoming-window(flow) - next-outgoing-id
        long nextIncoming = flow.nextIncomingId() < 0 ? 0 : flow.nextIncomingId();
        remoteIncomingWindow = flow.incomingWindow() - SerialNumber.diff(nextOutgoingId, nextIncoming);
        if (flow.handle() >= 0) {
            Link link = links.get(flow.handle());
            if (link == null) {
                throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "flow for handle %d, which is not attached",
                    flow.handle());
            }
            link.onFlow(flow);
        } else if (flow.echo()) {
            writeLinkFlow(-1, -1, -1, -1, false);
        }
        pump();
    }

    /** Writes a flow with the session's state and, for {@code handle >= 0}, a link's. */
    void writeLinkFlow(long handle, long deliveryCount, long linkCredit, long available, boolean drain) {
        FlowPerformative flow = flowOut;
        flow.reset();
        flow.nextIncomingId(nextIncomingId).incomingWindow(incomingWindow).nextOutgoingId(nextOutgoingId)
            .outgoingWindow(MAX_WINDOW);
        if (handle >= 0) {
            flow.handle(handle).deliveryCount(deliveryCount).linkCredit(linkCredit).drain(drain);
            if (available >= 0) {
                flow.available(available);
            }
        }
        writeFrame(flow);
    }

    // ---- incoming transfers --------------------------------------------------------------------------------

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        if (incomingWindow <= 0) {
            throw AmqpException.sessionError(AmqpError.WINDOW_VIOLATION, "transfer beyond the incoming window");
        }
        incomingWindow--;
        nextIncomingId = SerialNumber.add(nextIncomingId, 1);
        Link link = links.get(transfer.handle());
        if (link == null) {
            throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "transfer on handle %d, which is not attached",
                transfer.handle());
        }
        if (link instanceof IncomingLink incoming) {
            incoming.onTransfer(transfer, payload);
        } else if (link instanceof ManagementRequestLink management) {
            management.onTransfer(transfer, payload);
        } else {
            throw AmqpException.sessionError(AmqpError.NOT_ALLOWED, "transfer on handle %d, where we are the sender",
                transfer.handle());
        }
        if (incomingWindow <= config().sessionWindow() / 2) {
            incomingWindow = config().sessionWindow();
            writeLinkFlow(-1, -1, -1, -1, false);
        }
    }

    /** A publisher's delivery is confirmed: it is accepted in the next batch of dispositions. */
    void accepted(long deliveryId) {
        if (acceptedCount == accepted.length) {
            accepted = Arrays.copyOf(accepted, acceptedCount * 2);
        }
        accepted[acceptedCount++] = deliveryId;
    }

    /** Settles a publisher's delivery now with a non-accepted outcome (released, rejected). */
    void settleIncoming(long deliveryId, DeliveryState state) {
        writeFrame(disposition(true).first(deliveryId).settled(true).state(state));
    }

    private DispositionPerformative disposition(boolean receiver) {
        dispositionOut.reset();
        return dispositionOut.receiverRole(receiver);
    }

    /** Writes the batched accepted dispositions, contiguous delivery-ids as one range. */
    void writePendingDispositions() {
        if (acceptedCount == 0) {
            return;
        }
        Arrays.sort(accepted, 0, acceptedCount);
        int start = 0;
        for (int i = 1; i <= acceptedCount; i++) {
            if (i == acceptedCount || accepted[i] != accepted[i - 1] + 1) {
                DispositionPerformative d = disposition(true).first(accepted[start]).settled(true)
                    .state(Accepted.getInstance());
                if (i - 1 > start) {
                    d.last(accepted[i - 1]);
                }
                writeFrame(d);
                start = i;
            }
        }
        acceptedCount = 0;
    }

    // ---- outgoing deliveries -------------------------------------------------------------------------------

    /** Queues a delivery for the consumer link and writes what the peer's window allows. */
    void send(OutgoingLink link, QueueDelivery delivery) {
        outbound.add(new DeliveryWrite(link, delivery));
        pump();
    }

    /** Sends the link's credit state after the deliveries queued before it (echo, drain completion). */
    void sendCreditReply(OutgoingLink link, long deliveryCount, long linkCredit, long available, boolean drain) {
        outbound.add(new Outbound() {
            @Override
            public boolean write() {
                if (!link.isClosed()) {
                    writeLinkFlow(link.handle(), deliveryCount, linkCredit, available, drain);
                }
                return true;
            }

            @Override
            public void discard() {
            }
        });
        pump();
    }

    private void pump() {
        while (!outbound.isEmpty()) {
            if (!outbound.peek().write()) {
                return;
            }
            outbound.poll();
        }
    }

    void onDisposition(DispositionPerformative disposition) throws AmqpDecodeException {
        if (!disposition.receiverRole()) {
            // the publisher settling deliveries we settled already: nothing to do
            return;
        }
        Outcome outcome = outcomeOf(disposition);
        if (outcome == null) {
            return;
        }
        long first = disposition.first();
        long last = disposition.last() < 0 ? first : disposition.last();
        long count = SerialNumber.diff(last, first) + 1;
        if (count <= 0) {
            throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "disposition last %d before first %d", last, first);
        }
        if (count <= unsettled.size()) {
            for (long id = first; ; id = SerialNumber.add(id, 1)) {
                settle(unsettled.remove(id), outcome);
                if (id == last) {
                    break;
                }
            }
        } else {
            unsettled.entrySet().removeIf(e -> {
                boolean inRange = SerialNumber.diff(e.getKey(), first) >= 0 && SerialNumber.diff(last, e.getKey()) >= 0;
                if (inRange) {
                    settle(e.getValue(), outcome);
                }
                return inRange;
            });
        }
        if (!disposition.settled()) {
            // rcv-settle-mode first: the consumer should have settled; we settle for it
            writeFrame(disposition(false).first(first).last(last).settled(true).state(disposition.state()));
        }
    }

    private static void settle(SentDelivery delivery, Outcome outcome) {
        if (delivery != null) {
            delivery.link.settle(delivery.sequence, outcome);
        }
    }

    /** The outcome a disposition carries; null for a non-terminal state. Settled without a state is accepted. */
    private static Outcome outcomeOf(DispositionPerformative d) throws AmqpDecodeException {
        long code = d.stateCode();
        if (code < 0) {
            return d.settled() ? Outcome.ACCEPTED : null;
        }
        return switch ((int) code) {
            case PerformativeCode.ACCEPTED -> Outcome.ACCEPTED;
            case PerformativeCode.REJECTED -> Outcome.REJECTED;
            case PerformativeCode.RELEASED -> Outcome.RELEASED;
            case PerformativeCode.MODIFIED -> {
                Modified m = (Modified) d.state();
                yield Outcome.modified(Boolean.TRUE.equals(m.getDeliveryFailed()),
                    Boolean.TRUE.equals(m.getUndeliverableHere()));
            }
            default -> null;
        };
    }

    /** An outgoing delivery awaiting settlement. */
    private record SentDelivery(OutgoingLink link, long sequence) {
    }

    /** Something to write in order with deliveries; false from {@link #write()} means "wait for the window". */
    private interface Outbound {
        boolean write();

        void discard();
    }

    /**
     * One delivery written as transfer frames, split to the peer's max-frame-size, pausing between frames while the
     * peer's incoming window is closed. Subclasses say what the payload is and what happens once it is sent.
     */
    private abstract class FramedWrite implements Outbound {
        private final Link link;
        private final boolean settled;
        private CompositeByteBuf payload;
        private long deliveryId;

        FramedWrite(Link link, boolean settled) {
            this.link = link;
            this.settled = settled;
        }

        /** The whole payload; the write owns it. */
        abstract CompositeByteBuf encode();

        /** Called once every frame is written. */
        abstract void sent(long id);

        @Override
        public final boolean write() {
            if (link.isClosed()) {
                discard();
                return true;
            }
            boolean first = payload == null;
            if (first) {
                payload = encode();
                deliveryId = nextDeliveryId;
                nextDeliveryId = SerialNumber.add(nextDeliveryId, 1);
            }
            int maxFrame = connection.remoteMaxFrameSize();
            while (payload.isReadable() || first) {
                if (remoteIncomingWindow <= 0) {
                    return false;
                }
                TransferPerformative t = transferOut;
                t.reset();
                t.handle(link.handle());
                if (first) {
                    tag.clear().writeInt((int) deliveryId);
                    t.deliveryId(deliveryId).deliveryTag(tag, 0, 4).messageFormat(0);
                }
                t.settled(settled);
                ByteBuf head = connection.context().alloc().ioBuffer(64);
                int headLength = PerformativeCodec.writeFrame(head, AmqpFrame.TYPE_AMQP, channel, t, 0);
                int chunk = Math.min(payload.readableBytes(), maxFrame - headLength);
                if (chunk < payload.readableBytes()) {
                    // does not fit: the frame says more follows (one byte longer, so recompute the room)
                    head.clear();
                    headLength = PerformativeCodec.writeFrame(head, AmqpFrame.TYPE_AMQP, channel, t.more(true), 0);
                    chunk = Math.min(payload.readableBytes(), maxFrame - headLength);
                }
                head.setInt(0, headLength + chunk);
                writer.write(head);
                if (chunk > 0) {
                    writer.write(payload.readRetainedSlice(chunk));
                }
                nextOutgoingId = SerialNumber.add(nextOutgoingId, 1);
                remoteIncomingWindow--;
                first = false;
            }
            payload.release();
            payload = null;
            sent(deliveryId);
            return true;
        }

        @Override
        public void discard() {
            if (payload != null) {
                payload.release();
                payload = null;
            }
        }
    }

    /**
     * A queue's delivery to a consumer: a fresh header and annotations followed by a retained slice of the
     * publisher's bare message (not copied).
     */
    private final class DeliveryWrite extends FramedWrite {
        private final OutgoingLink link;
        private final QueueDelivery delivery;
        private boolean encoded;

        DeliveryWrite(OutgoingLink link, QueueDelivery delivery) {
            super(link, link.preSettled());
            this.link = link;
            this.delivery = delivery;
        }

        @Override
        CompositeByteBuf encode() {
            Message message = delivery.message();
            encoded = true;
            try {
                annotations.clear();
                annotations.put("x-exchange", message.exchange());
                if (message.routingKey() != null) {
                    annotations.put("x-routing-key", message.routingKey());
                }
                ByteBuf prefix = connection.context().alloc().ioBuffer(64);
                MessageSections sections = message.toAmqp10().sections();
                DeliveryEncoder.writeAnnotations(prefix, sections, message.durable(), message.priority(),
                    message.ttl(), delivery.firstAcquirer(), delivery.deliveryCount(), annotations);
                ByteBuf bytes = sections.buffer();
                int bare = sections.bareMessageStart();
                CompositeByteBuf composite = connection.context().alloc().compositeBuffer(2);
                composite.addComponent(true, prefix);
                composite.addComponent(true, bytes.retainedSlice(bare, sections.end() - bare));
                return composite;
            } catch (AmqpDecodeException e) {
                // accepted on the way in, so its bytes are sound: this cannot happen
                throw new IllegalStateException("stored message no longer decodes", e);
            } finally {
                message.release();
            }
        }

        @Override
        void sent(long id) {
            if (!link.preSettled()) {
                unsettled.put(id, new SentDelivery(link, delivery.sequence()));
            }
        }

        @Override
        public void discard() {
            super.discard();
            if (!encoded) {
                delivery.message().release();
            }
        }
    }

    /** Sends an encoded message on {@code link}'s handle, pre-settled (management responses). Takes over {@code bytes}. */
    void sendSettled(ManagementResponseLink link, ByteBuf bytes) {
        outbound.add(new SettledWrite(link, bytes));
        pump();
    }

    /** A pre-settled message the broker itself sends (a management response). */
    private final class SettledWrite extends FramedWrite {
        private ByteBuf bytes;

        SettledWrite(Link link, ByteBuf bytes) {
            super(link, true);
            this.bytes = bytes;
        }

        @Override
        CompositeByteBuf encode() {
            CompositeByteBuf payload = connection.context().alloc().compositeBuffer(1).addComponent(true, bytes);
            bytes = null;
            return payload;
        }

        @Override
        void sent(long id) {
        }

        @Override
        public void discard() {
            super.discard();
            if (bytes != null) {
                bytes.release();
                bytes = null;
            }
        }
    }
}
