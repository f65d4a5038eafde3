package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * Writes whole stream protocol frames, size field first: any {@link Command} record, and without objects the
 * per-message ones a server sends or a client sends besides publish (heartbeat, credit, store offset, the deliver
 * header). Publish, publish confirm and publish error are in {@link PublishFrameWriter}. Every method appends at
 * {@code out}'s writer index and neither retains nor releases a buffer. Frame-max is the caller's to respect; the
 * Java client counts the size field in it for the frames it receives. Stateless; safe from any thread.
 */
public final class StreamFrameWriter {
    /** Size, key, version and subscription id. */
    public static final int DELIVER_V1_HEADER = 9;
    /** And the committed chunk id. */
    public static final int DELIVER_V2_HEADER = 17;

    private StreamFrameWriter() {
    }

    /**
     * A frame holding {@code command}.
     *
     * @return the frame's size field (its length less 4)
     * @throws IllegalArgumentException as {@link Command#writeBody} does; {@code out} is then as it was
     */
    public static int writeCommand(ByteBuf out, Command command) {
        int start = StreamFrame.begin(out, command.wireKey(), command.version());
        try {
            command.writeBody(out);
        } catch (RuntimeException e) {
            out.writerIndex(start);
            throw e;
        }
        return StreamFrame.end(out, start);
    }

    /** {@code heartbeat} (0x17): key and version only. */
    public static void writeHeartbeat(ByteBuf out) {
        out.writeInt(StreamFrame.MIN_SIZE).writeShort(CommandKey.HEARTBEAT.key()).writeShort(1);
    }

    /** {@code credit} (0x09): more chunks for a subscription. */
    public static void writeCredit(ByteBuf out, int subscriptionId, int credit) {
        int start = StreamFrame.begin(out, CommandKey.CREDIT.key(), 1);
        Wire.writeUint8(out, subscriptionId, "subscription id");
        Wire.writeUint16(out, credit, "credit");
        StreamFrame.end(out, start);
    }

    /** {@code store_offset} (0x0a), the strings written straight from their characters. */
    public static void writeStoreOffset(ByteBuf out, CharSequence reference, CharSequence stream, long offset) {
        int start = StreamFrame.begin(out, CommandKey.STORE_OFFSET.key(), 1);
        try {
            Wire.writeString(out, reference);
            Wire.writeString(out, stream);
        } catch (RuntimeException e) {
            out.writerIndex(start);
            throw e;
        }
        out.writeLong(offset);
        StreamFrame.end(out, start);
    }

    /**
     * The first {@value #DELIVER_V1_HEADER} bytes of a v1 {@code deliver} frame: the chunk's {@code chunkLength}
     * bytes, as stored, go after it as they are (a retained slice, a file region), so they are never copied.
     */
    public static void writeDeliverHeader(ByteBuf out, int subscriptionId, int chunkLength) {
        out.writeInt(deliverSize(1, chunkLength)).writeShort(CommandKey.DELIVER.key()).writeShort(1);
        Wire.writeUint8(out, subscriptionId, "subscription id");
    }

    /** The first {@value #DELIVER_V2_HEADER} bytes of a v2 {@code deliver} frame, which adds the committed chunk id. */
    public static void writeDeliverHeader(ByteBuf out, int subscriptionId, long committedChunkId, int chunkLength) {
        out.writeInt(deliverSize(9, chunkLength)).writeShort(CommandKey.DELIVER.key()).writeShort(2);
        Wire.writeUint8(out, subscriptionId, "subscription id");
        out.writeLong(committedChunkId);
    }

    /** The size field: key, version, {@code before} bytes of fields, the chunk. */
    private static int deliverSize(int before, int chunkLength) {
        if (chunkLength < DeliverFrame.CHUNK_HEADER_SIZE
                || chunkLength > StreamFrameDecoder.MAX_BUFFERABLE - StreamFrame.MIN_SIZE - before) {
            throw new IllegalArgumentException("chunk of " + chunkLength + " bytes");
        }
        return StreamFrame.MIN_SIZE + before + chunkLength;
    }
}
