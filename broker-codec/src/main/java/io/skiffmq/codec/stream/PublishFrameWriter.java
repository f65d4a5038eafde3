package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * Writes {@code publish}, {@code publish_confirm} and {@code publish_error} frames item by item, without objects:
 * {@code begin…} writes the frame's start and returns where it is, {@code add…} appends an item, {@code end…} fills
 * in size and count. Nothing else may be written to {@code out} between {@code begin} and {@code end}. The
 * layouts are in {@link PublishFrame}, {@link PublishConfirmFrame} and {@link PublishErrorFrame}. Buffers given
 * are read, neither retained nor released. Stateless; safe from any thread.
 */
public final class PublishFrameWriter {
    /** Size, key, version, publisher id and count. */
    private static final int START = 13;

    private PublishFrameWriter() {
    }

    private static int begin(ByteBuf out, CommandKey command, int version, int publisherId) {
        int start = StreamFrame.begin(out, command.key(), version);
        Wire.writeUint8(out, publisherId, "publisher id");
        out.writeInt(0);
        return start;
    }

    private static void end(ByteBuf out, int start, int count) {
        out.setInt(start + START - 4, count);
        StreamFrame.end(out, start);
    }

    /** Starts a publish; version 2 if the messages carry filter values. */
    public static int beginPublish(ByteBuf out, int version, int publisherId) {
        if (version != 1 && version != 2) {
            throw new IllegalArgumentException("publish version " + version);
        }
        return begin(out, CommandKey.PUBLISH, version, publisherId);
    }

    /** A message in a v1 publish: its readable bytes are copied, its indexes left alone. */
    public static void addMessage(ByteBuf out, long publishingId, ByteBuf message) {
        out.writeLong(publishingId).writeInt(message.readableBytes());
        out.writeBytes(message, message.readerIndex(), message.readableBytes());
    }

    /** A message in a v2 publish, with its filter value (null for none, written as length -1). */
    public static void addMessage(ByteBuf out, long publishingId, CharSequence filterValue, ByteBuf message) {
        int at = out.writerIndex();
        out.writeLong(publishingId);
        if (filterValue == null) {
            out.writeShort(-1);
        } else {
            try {
                Wire.writeString(out, filterValue);
            } catch (RuntimeException e) {
                out.writerIndex(at);
                throw e;
            }
        }
        out.writeInt(message.readableBytes());
        out.writeBytes(message, message.readerIndex(), message.readableBytes());
    }

    /**
     * A sub-entry batch in a v1 publish: {@code records} messages, each an int32 size and its bytes, possibly
     * compressed as a whole ({@code compression} 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
     */
    public static void addSubEntryBatch(ByteBuf out, long publishingId, int compression, int records,
            long uncompressedLength, ByteBuf data) {
        if (compression < 0 || compression > 7) {
            throw new IllegalArgumentException("compression " + compression);
        }
        out.writeLong(publishingId).writeByte(0x80 | compression << 4);
        Wire.writeUint16(out, records, "records");
        Wire.writeUint32(out, uncompressedLength, "uncompressed length");
        out.writeInt(data.readableBytes());
        out.writeBytes(data, data.readerIndex(), data.readableBytes());
    }

    /**
     * Ends the publish begun at {@code start}.
     *
     * @param count the messages added (a sub-entry batch counts once)
     */
    public static void endPublish(ByteBuf out, int start, int count) {
        end(out, start, count);
    }

    public static int beginConfirm(ByteBuf out, int publisherId) {
        return begin(out, CommandKey.PUBLISH_CONFIRM, 1, publisherId);
    }

    public static void addConfirm(ByteBuf out, long publishingId) {
        out.writeLong(publishingId);
    }

    /** Ends the confirm begun at {@code start}; returns how many ids it holds. */
    public static int endConfirm(ByteBuf out, int start) {
        int count = (out.writerIndex() - start - START) / 8;
        end(out, start, count);
        return count;
    }

    public static int beginError(ByteBuf out, int publisherId) {
        return begin(out, CommandKey.PUBLISH_ERROR, 1, publisherId);
    }

    public static void addError(ByteBuf out, long publishingId, ResponseCode code) {
        out.writeLong(publishingId).writeShort(code.code());
    }

    /** Ends the error begun at {@code start}; returns how many ids it holds. */
    public static int endError(ByteBuf out, int start) {
        int count = (out.writerIndex() - start - START) / 10;
        end(out, start, count);
        return count;
    }
}
