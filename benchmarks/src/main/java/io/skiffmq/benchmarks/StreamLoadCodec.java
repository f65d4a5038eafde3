package io.skiffmq.benchmarks;

import com.rabbitmq.stream.Codec;
import com.rabbitmq.stream.Message;
import com.rabbitmq.stream.MessageBuilder;
import com.rabbitmq.stream.Properties;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/**
 * The stream load tool's messages on the wire: one AMQP 1.0 {@code data} section holding a {@link LoadBody} (send
 * time, producer and sequence, padding), what stream-perf-test sends (a body and nothing else). Encoded straight into
 * the client's frame and decoded in place, so the tool spends its cores on the protocol, not on a message model.
 * Stateless; safe from any thread.
 */
final class StreamLoadCodec implements Codec {
    /** Descriptor of the data section (0x00 0x53 0x75). */
    private static final int DATA = 0x005375;
    private static final int VBIN8 = 0xa0;
    private static final int VBIN32 = 0xb0;

    /** The tool's messages have a body only, which it reads and writes itself: no model of the rest. */
    interface BodyOnly extends Message {
        @Override
        default boolean hasPublishingId() {
            return false;
        }

        @Override
        default long getPublishingId() {
            return 0;
        }

        @Override
        default byte[] getBodyAsBinary() {
            return null;
        }

        @Override
        default Object getBody() {
            return null;
        }

        @Override
        default Properties getProperties() {
            return null;
        }

        @Override
        default Map<String, Object> getApplicationProperties() {
            return null;
        }

        @Override
        default Map<String, Object> getMessageAnnotations() {
            return null;
        }
    }

    /** A message to publish: its body is written when the client encodes it. */
    static final class Outgoing implements BodyOnly, Codec.EncodedMessage {
        final long sentAt;
        final int id;
        final int size;
        final long publishingId;
        /** Its filter value (publish v2), null for none. */
        final String filterValue;

        Outgoing(long sentAt, int id, int size, long publishingId) {
            this(sentAt, id, size, publishingId, null);
        }

        Outgoing(long sentAt, int id, int size, long publishingId, String filterValue) {
            this.sentAt = sentAt;
            this.id = id;
            this.size = size;
            this.publishingId = publishingId;
            this.filterValue = filterValue;
        }

        /** The entry: its size (as the client's own encoded messages write it), then the message. */
        @Override
        public void writeTo(ByteBuf out) {
            out.writeInt(getSize());
            out.writeMedium(DATA);
            if (size < 256) {
                out.writeByte(VBIN8).writeByte(size);
            } else {
                out.writeByte(VBIN32).writeInt(size);
            }
            LoadBody.write(out, sentAt, id, size);
        }

        @Override
        public void writeTo(OutputStream out) throws IOException {
            ByteBuf buf = io.netty.buffer.Unpooled.buffer(getSize());
            try {
                writeTo(buf);
                buf.readBytes(out, buf.readableBytes());
            } finally {
                buf.release();
            }
        }

        /** The message's size, without the size field {@link #writeTo} writes first. */
        @Override
        public int getSize() {
            return 3 + (size < 256 ? 2 : 5) + size;
        }

        @Override
        public boolean hasPublishingId() {
            return true;
        }

        @Override
        public long getPublishingId() {
            return publishingId;
        }

        @Override
        public byte[] getBodyAsBinary() {
            throw new UnsupportedOperationException("written when encoded");
        }
    }

    /**
     * A message received: its body's send time, or -1 when the body is not a {@link LoadBody} of the expected size
     * (a message another tool wrote, or a damaged one).
     */
    record Received(long sentAt) implements BodyOnly {
    }

    private static final Received DAMAGED = new Received(-1);

    private final int size;

    /** @param size the body size a received message must have */
    StreamLoadCodec(int size) {
        this.size = size;
    }

    @Override
    public Codec.EncodedMessage encode(Message message) {
        if (message instanceof Outgoing outgoing) {
            return outgoing;
        }
        throw new IllegalArgumentException("the stream load tool publishes its own messages only");
    }

    @Override
    public Message decode(ByteBuf in, int length) {
        int at = in.readerIndex();
        in.skipBytes(length);
        if (length < 5 || in.getMedium(at) != DATA) {
            return DAMAGED;
        }
        int code = in.getUnsignedByte(at + 3);
        int body = code == VBIN8 ? at + 5 : at + 8;
        int bodyLength = code == VBIN8 ? in.getUnsignedByte(at + 4) : code == VBIN32 && length >= 8
            ? in.getInt(at + 4) : -1;
        if (bodyLength < 0 || body + bodyLength != at + length || LoadBody.check(in, body, bodyLength, size) < 0) {
            return DAMAGED;
        }
        return new Received(LoadBody.sentAt(in, body));
    }

    @Override
    public MessageBuilder messageBuilder() {
        throw new UnsupportedOperationException("the stream load tool builds its messages itself");
    }
}
