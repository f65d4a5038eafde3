package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A content header frame's payload [4.2.6.1]: class id, weight (always 0), body size, then the properties as
 * received (property flags and list), kept as a retained slice so the broker can store and deliver the
 * publisher's bytes; read them with {@link BasicProperties#decode} or {@link BasicProperties#summarize} when
 * needed. Whoever gets a {@code ContentHeader} from {@link #decode} releases it once.
 *
 * <pre>
 *   0        2        4                    12
 *   | class  | weight |      body size     | property flags (2) | property list ... |
 * </pre>
 */
public final class ContentHeader extends DefaultByteBufHolder {
    /** Class id, weight and body size. */
    public static final int FIXED_SIZE = 12;

    private final int classId;
    private final int weight;
    private final long bodySize;

    private ContentHeader(int classId, int weight, long bodySize, ByteBuf properties) {
        super(properties);
        this.classId = classId;
        this.weight = weight;
        this.bodySize = bodySize;
    }

    /**
     * Reads the readable bytes of {@code payload} (a header frame's payload) without changing its indexes. The
     * properties are a retained slice of {@code payload}, which is neither retained otherwise nor released.
     *
     * @throws Amqp091DecodeException {@link DecodeFailure#MALFORMED_FRAME} for a payload shorter than 12 bytes
     *         (RabbitMQ's {@code frame_error}), {@link DecodeFailure#BAD_VALUE} for a body size over 2^63-1
     */
    public static ContentHeader decode(ByteBuf payload) throws Amqp091DecodeException {
        int index = payload.readerIndex();
        int length = payload.readableBytes();
        if (length < FIXED_SIZE) {
            throw Amqp091DecodeException.of(DecodeFailure.MALFORMED_FRAME, "content header of %d bytes", length);
        }
        long bodySize = payload.getLong(index + 4);
        if (bodySize < 0) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_VALUE, "body size %s", Long.toUnsignedString(bodySize));
        }
        return new ContentHeader(payload.getUnsignedShort(index), payload.getUnsignedShort(index + 2), bodySize,
            payload.retainedSlice(index + FIXED_SIZE, length - FIXED_SIZE));
    }

    public int classId() {
        return classId;
    }

    /** Unused by the protocol and must be 0 [4.2.6.1]; RabbitMQ answers anything else with unexpected-frame. */
    public int weight() {
        return weight;
    }

    public long bodySize() {
        return bodySize;
    }

    /** The property flags and list as received (same as {@link #content()}); released with the header. */
    public ByteBuf properties() {
        return content();
    }

    @Override
    public String toString() {
        return "ContentHeader(class=" + classId + ", bodySize=" + bodySize + ", properties="
            + content().readableBytes() + " bytes)";
    }
}
