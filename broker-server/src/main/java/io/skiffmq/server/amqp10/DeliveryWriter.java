package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.BrokerAnnotations;
import io.skiffmq.codec.amqp10.DeliveryEncoder;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.server.peer.NodeForm;
import java.util.ArrayDeque;

/**
 * What a session sends on its links, in order: deliveries, the credit replies that account for them, and the
 * broker's own pre-settled messages. Items wait in {@link #outbound} while the peer's incoming window is closed
 * [2.5.6] or the socket is not writable; a delivery larger than the peer's max-frame-size goes out as several
 * transfer frames, and may pause between them. Owned by the connection's event loop.
 */
final class DeliveryWriter {
    private final AmqpSession session;
    private final Amqp10ConnectionHandler connection;
    private final FrameWriter writer;
    private final SessionWindow window;
    private final UnsettledDeliveries unsettled;
    private final int channel;
    private final ArrayDeque<Outbound> outbound = new ArrayDeque<>();
    /**
     * Delivery writes done with, for the next deliveries, rather than one new per message. While the peer's window is
     * open one is enough; after a closed window lets a backlog go, at most {@value #MAX_SPARE_WRITES} are kept, so a
     * burst does not leave all its writes behind.
     */
    private final ArrayDeque<DeliveryWrite> spareWrites = new ArrayDeque<>();
    /** The message annotation of a quorum queue's redeliveries: how often the message went back. */
    private static final String X_DELIVERY_COUNT = "x-delivery-count";
    private static final int MAX_SPARE_WRITES = 256;
    private final TransferPerformative transferOut = new TransferPerformative();
    private final BrokerAnnotations annotations = new BrokerAnnotations();
    private final ByteBuf tag = Unpooled.buffer(4, 4);
    /**
     * Room for a frame's start: frame header (8), transfer (up to about 30 with a 4-byte tag), header section (up to
     * about 20) and the broker's annotations (about 40 with a short routing key); more grows the buffer.
     */
    private static final int FRAME_START = 128;

    DeliveryWriter(AmqpSession session, Amqp10ConnectionHandler connection, SessionWindow window,
            UnsettledDeliveries unsettled, int channel) {
        this.session = session;
        this.connection = connection;
        this.writer = connection.writer();
        this.window = window;
        this.unsettled = unsettled;
        this.channel = channel;
    }

    /** Queues a delivery for the consumer link and writes what the peer's window allows. */
    void send(OutgoingLink link, QueueDelivery delivery) {
        if (link.isClosed()) {
            // it ended while the delivery was on its way (its queue took back what was unsettled): nothing to write,
            // and nothing to wait for either: a closed connection's writer is never writable again
            delivery.message().release();
            return;
        }
        DeliveryWrite write = spareWrites.poll();
        outbound.add((write != null ? write : new DeliveryWrite()).of(link, delivery));
        pump();
    }

    /** Sends the link's credit state after the deliveries queued before it (echo, drain completion). */
    void sendCreditReply(OutgoingLink link, long deliveryCount, long linkCredit, long available, boolean drain) {
        outbound.add(new Outbound() {
            @Override
            public boolean write() {
                if (!link.isClosed()) {
                    session.writeLinkFlow(link.handle(), deliveryCount, linkCredit, available, drain);
                }
                return true;
            }

            @Override
            public void discard() {
            }
        });
        pump();
    }

    /** Sends an encoded message on {@code link}'s handle, pre-settled (management responses). Takes over {@code bytes}. */
    void sendSettled(Link link, ByteBuf bytes) {
        outbound.add(new SettledWrite(link, bytes));
        pump();
    }

    /**
     * Writes what waits, in order, until the peer's window closes or the socket takes no more
     * ({@link FrameWriter#isWritable}): then it waits here, as the queue's messages it already holds (bounded by
     * the link's credit), not as encoded frames, and goes on when the connection hears the socket is writable.
     */
    void pump() {
        while (!outbound.isEmpty()) {
            if (!writer.isWritable()) {
                connection.flushLater(); // what was written must reach the socket for it to become writable again
                return;
            }
            if (!outbound.peek().write()) {
                return;
            }
            outbound.poll().written();
        }
    }

    /** Drops everything waiting (the session ends), releasing what it holds. */
    void discardAll() {
        for (Outbound item : outbound) {
            item.discard();
        }
        outbound.clear();
    }

    /** Something to write in order with deliveries; false from {@link #write()} means "wait for the window". */
    private interface Outbound {
        boolean write();

        void discard();

        /** Called once {@link #write()} has returned true and the item has left the queue. */
        default void written() {
        }
    }

    /**
     * One delivery written as transfer frames. The usual delivery fits one frame: the frame header, the transfer and
     * what precedes the body go in one buffer, and the body follows as a second write (a retained slice, not a copy).
     * A larger one is split to the peer's max-frame-size, pausing between frames while the peer's incoming window is
     * closed. Subclasses say what the payload is and what happens once it is sent.
     */
    private abstract class FramedWrite implements Outbound {
        /** What is left to send of a delivery split over several frames; null otherwise. */
        private CompositeByteBuf payload;
        private long deliveryId;

        abstract Link link();

        abstract boolean settled();

        /**
         * Appends the start of the payload to {@code frame} (after its transfer) and returns the rest, which the
         * write owns. Called once.
         */
        abstract ByteBuf encode(ByteBuf frame);

        /** Called once every frame is written. */
        abstract void sent(long id);

        /** The transfer's message-format: 0, AMQP 1.0's. */
        long messageFormat() {
            return 0;
        }

        @Override
        public final boolean write() {
            if (link().isClosed()) {
                discard();
                return true;
            }
            if (payload == null) {
                if (!window.canSend()) {
                    return false;
                }
                deliveryId = window.takeDeliveryId();
                if (writeWhole()) {
                    sent(deliveryId);
                    return true;
                }
            }
            return writeSplit();
        }

        /** Writes the delivery as one frame if it fits; otherwise keeps it in {@link #payload} to be split. */
        private boolean writeWhole() {
            ByteBuf frame = connection.context().alloc().ioBuffer(FRAME_START);
            ByteBuf rest;
            int headLength;
            try {
                headLength = PerformativeCodec.writeFrame(frame, AmqpFrame.TYPE_AMQP, channel, transfer(true), 0);
                rest = encode(frame);
            } catch (RuntimeException e) {
                frame.release();
                throw e;
            }
            int length = frame.readableBytes() + rest.readableBytes();
            if (length <= connection.remoteMaxFrameSize()) {
                frame.setInt(0, length);
                writer.write(frame);
                if (rest.isReadable()) {
                    writer.write(rest);
                } else {
                    rest.release();
                }
                window.transferSent();
                return true;
            }
            payload = connection.context().alloc().compositeBuffer(2)
                .addComponent(true, frame.retainedSlice(headLength, frame.readableBytes() - headLength))
                .addComponent(true, rest);
            frame.release();
            return false;
        }

        /** The transfer for the next frame: the first carries the delivery's id, tag and format. */
        private TransferPerformative transfer(boolean first) {
            TransferPerformative t = transferOut;
            t.reset();
            t.handle(link().handle());
            if (first) {
                tag.clear().writeInt((int) deliveryId);
                t.deliveryId(deliveryId).deliveryTag(tag, 0, 4).messageFormat(messageFormat());
            }
            return t.settled(settled());
        }

        /** Writes the frames of a delivery larger than the peer's max-frame-size while its window allows. */
        private boolean writeSplit() {
            int maxFrame = connection.remoteMaxFrameSize();
            ChannelHandlerContext ctx = connection.context();
            // the first frame is still to be written while nothing of the payload has been read
            boolean first = payload.readerIndex() == 0;
            while (payload.isReadable()) {
                if (!window.canSend()) {
                    return false;
                }
                TransferPerformative t = transfer(first);
                ByteBuf head = ctx.alloc().ioBuffer(64);
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
                window.transferSent();
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
        private OutgoingLink link;
        private QueueDelivery delivery;
        private boolean encoded;
        /** To another node, a 0-9-1 message: in its stored form ({@link NodeForm}). */
        private boolean nodeForm;

        DeliveryWrite of(OutgoingLink link, QueueDelivery delivery) {
            this.link = link;
            this.delivery = delivery;
            encoded = false;
            nodeForm = link.toNode() && NodeForm.carries(delivery.message());
            return this;
        }

        @Override
        long messageFormat() {
            return nodeForm ? NodeForm.AMQP_091 : 0;
        }

        @Override
        Link link() {
            return link;
        }

        @Override
        boolean settled() {
            return link.preSettled();
        }

        @Override
        ByteBuf encode(ByteBuf frame) {
            Message message = delivery.message();
            encoded = true;
            if (nodeForm) {
                try {
                    return NodeForm.write(frame.alloc(), message, delivery.firstAcquirer(),
                        delivery.deliveryCount(), delivery.returns());
                } finally {
                    message.release();
                }
            }
            try {
                annotations.clear();
                annotations.put("x-exchange", message.exchange());
                // always there, "" included, as RabbitMQ sets it
                annotations.put("x-routing-key", message.routingKey() == null ? "" : message.routingKey());
                if (delivery.returns() > 0) {
                    // a quorum queue's count of returns, as RabbitMQ 4.0 annotates a redelivery (a long)
                    annotations.put(X_DELIVERY_COUNT, delivery.returns());
                }
                if (message instanceof Amqp10Message stored && stored.streamOffset() >= 0) {
                    // read from a stream: its offset, as RabbitMQ 4 annotates a stream's deliveries (a long)
                    annotations.put(Amqp10Message.X_STREAM_OFFSET, stored.streamOffset());
                }
                // the publisher's bytes, or a 0-9-1 message converted once (owned by the message)
                MessageSections sections = message.toAmqp10().sections();
                DeliveryEncoder.writeAnnotations(frame, sections, message.durable(), message.priority(),
                    message.ttl(), delivery.firstAcquirer(), delivery.deliveryCount(), annotations);
                int bare = sections.bareMessageStart();
                return sections.buffer().retainedSlice(bare, sections.end() - bare);
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
                unsettled.add(id, link, delivery.tag());
            }
        }

        @Override
        public void discard() {
            super.discard();
            if (!encoded) {
                delivery.message().release();
            }
        }

        @Override
        public void written() {
            link = null;
            delivery = null;
            if (spareWrites.size() < MAX_SPARE_WRITES) {
                spareWrites.add(this);
            }
        }
    }

    /** A pre-settled message the broker itself sends (a management response). */
    private final class SettledWrite extends FramedWrite {
        private final Link link;
        private ByteBuf bytes;

        SettledWrite(Link link, ByteBuf bytes) {
            this.link = link;
            this.bytes = bytes;
        }

        @Override
        Link link() {
            return link;
        }

        @Override
        boolean settled() {
            return true;
        }

        @Override
        ByteBuf encode(ByteBuf frame) {
            ByteBuf payload = bytes;
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
