package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A reusable view over a {@code store_offset} frame (0x0a), as a server reads it: reference (string), stream
 * (string), offset (uint64). The strings are positions in the frame, so looking a stream up by its bytes needs no
 * object; {@link #reference()} and {@link #stream()} make strings for the cold paths. Holds a reference to the
 * frame without retaining it. Not thread-safe: one per connection.
 */
public final class StoreOffsetFrame {
    private ByteBuf frame;
    private int referenceIndex;
    private int referenceLength;
    private int streamIndex;
    private int streamLength;
    private long offset;

    /** @throws IllegalArgumentException when the frame is not a store offset */
    public StoreOffsetFrame wrap(ByteBuf frame) throws StreamDecodeException {
        int at = StreamFrame.body(frame, CommandKey.STORE_OFFSET);
        int to = frame.writerIndex();
        int refLength = stringLength(frame, at, to, "reference");
        int streamAt = at + 2 + refLength;
        int length = stringLength(frame, streamAt, to, "stream");
        StreamFrame.exactly(frame, at, 2 + refLength + 2 + length + 8, CommandKey.STORE_OFFSET);
        this.frame = frame;
        this.referenceIndex = at + 2;
        this.referenceLength = refLength;
        this.streamIndex = streamAt + 2;
        this.streamLength = length;
        this.offset = frame.getLong(streamIndex + length);
        return this;
    }

    private static int stringLength(ByteBuf frame, int at, int to, String what) throws StreamDecodeException {
        if (to - at < 2) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "store_offset cut short at the %s", what);
        }
        int length = frame.getShort(at);
        if (length < 0) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "store_offset %s of length %d", what, length);
        }
        if (length > to - at - 2) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "store_offset %s of %d bytes, %d left", what,
                length, to - at - 2);
        }
        return length;
    }

    /** The buffer the positions refer to. */
    public ByteBuf frame() {
        return frame;
    }

    public int referenceIndex() {
        return referenceIndex;
    }

    public int referenceLength() {
        return referenceLength;
    }

    public int streamIndex() {
        return streamIndex;
    }

    public int streamLength() {
        return streamLength;
    }

    /** The offset to store (a uint64). */
    public long offset() {
        return offset;
    }

    /** The reference as a string (allocates). */
    public String reference() {
        return frame.toString(referenceIndex, referenceLength, StandardCharsets.UTF_8);
    }

    /** The stream name as a string (allocates). */
    public String stream() {
        return frame.toString(streamIndex, streamLength, StandardCharsets.UTF_8);
    }
}
