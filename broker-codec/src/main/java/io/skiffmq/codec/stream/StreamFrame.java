package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * The layout of a stream protocol frame (PROTOCOL.adoc "Frame Structure"), big-endian, and accessors over a frame
 * as {@link StreamFrameDecoder} emits it: a buffer whose readable bytes run from the key to the end of the frame
 * (the size field is not part of it).
 *
 * <pre>
 *   0        4       6         8                                       4 + size
 *   |  size  |  key  | version | correlation id | code | fields ...     |
 *   | uint32 | uint16| uint16  | uint32 (requests and responses only)   |
 *                              | one-way commands: fields straight away |
 * </pre>
 *
 * <p>{@code size} counts the bytes after itself. A response's key is its request's with the high bit set. Requests
 * and their responses carry a correlation id, responses then a uint16 response code; the tune and credit responses
 * and the metadata response are the protocol's exceptions (no correlation id; no code). Stateless.
 */
public final class StreamFrame {
    /** The uint32 size field, which the size does not count. */
    public static final int SIZE_FIELD = 4;
    /** Key and version: the smallest frame. */
    public static final int MIN_SIZE = 4;
    /** Where the fields start in a frame as emitted (after key and version). */
    public static final int BODY_OFFSET = 4;

    private StreamFrame() {
    }

    /** The key, response flag included, of a frame as emitted by the decoder. Indexes are left alone. */
    public static int key(ByteBuf frame) {
        return frame.getUnsignedShort(frame.readerIndex());
    }

    public static int version(ByteBuf frame) {
        return frame.getUnsignedShort(frame.readerIndex() + 2);
    }

    public static boolean isResponse(ByteBuf frame) {
        return (key(frame) & CommandKey.RESPONSE_FLAG) != 0;
    }

    /** The command, response flag ignored; null for a key the protocol does not define. */
    public static CommandKey command(ByteBuf frame) {
        return CommandKey.of(key(frame));
    }

    /**
     * Where the fields of {@code frame} start, once its key is {@code expected} (a request or one-way command) and
     * its version one {@code expected} has. For the flyweights, which their callers hand frames already sorted by
     * key.
     *
     * @throws IllegalArgumentException for another key: the caller's mistake, not the peer's
     */
    static int body(ByteBuf frame, CommandKey expected) throws StreamDecodeException {
        int key = key(frame);
        if (key != expected.key()) {
            throw new IllegalArgumentException("not a " + expected.protocolName() + ": key 0x" + Integer.toHexString(key));
        }
        int version = version(frame);
        if (version < 1 || version > expected.maxVersion()) {
            throw StreamDecodeException.of(DecodeFailure.UNKNOWN_COMMAND, "%s version %d", expected.protocolName(),
                version);
        }
        return frame.readerIndex() + BODY_OFFSET;
    }

    /** Fails unless {@code frame}'s fields, from {@code body}, are exactly {@code length} bytes. */
    static void exactly(ByteBuf frame, int body, long length, CommandKey command) throws StreamDecodeException {
        long actual = frame.writerIndex() - body;
        if (actual != length) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "%s with %d bytes of fields, %d expected",
                command.protocolName(), actual, length);
        }
    }

    /** Fails unless {@code frame}'s fields, from {@code body}, are {@code length} bytes or more. */
    static void atLeast(ByteBuf frame, int body, int length, CommandKey command) throws StreamDecodeException {
        int actual = frame.writerIndex() - body;
        if (actual < length) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "%s with %d bytes of fields, %d at least",
                command.protocolName(), actual, length);
        }
    }

    /**
     * Checks a frame of {@code command} whose fields are a publisher id (uint8) and an array of fixed-size items
     * (publish confirm and error); returns the item count.
     */
    static int publisherItems(ByteBuf frame, CommandKey command, int itemSize) throws StreamDecodeException {
        int body = body(frame, command);
        atLeast(frame, body, 5, command);
        exactly(frame, body, 5 + frame.getUnsignedInt(body + 1) * itemSize, command);
        return (int) frame.getUnsignedInt(body + 1);
    }

    /** Writes size (a placeholder), key and version; returns where the frame starts, for {@link #end}. */
    static int begin(ByteBuf out, int wireKey, int version) {
        int start = out.writerIndex();
        out.writeInt(0).writeShort(wireKey).writeShort(version);
        return start;
    }

    /** Sets the size of the frame begun at {@code start} to what was written since; returns the frame's size field. */
    static int end(ByteBuf out, int start) {
        int size = out.writerIndex() - start - SIZE_FIELD;
        out.setInt(start, size);
        return size;
    }
}
