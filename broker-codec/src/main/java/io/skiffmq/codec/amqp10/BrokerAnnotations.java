package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.Arrays;

/**
 * Message annotations the broker adds on delivery ({@code x-exchange}, {@code x-routing-key}…), kept encoded
 * as the key/value pairs of a map so that {@link DeliveryEncoder} can append them to a client's annotations
 * without decoding either. Added keys replace a client's annotation of the same name.
 *
 * <p>Reusable ({@link #clear()}); backed by an unpooled heap buffer, so there is nothing to release. Not
 * thread-safe: owned by whoever builds the delivery.
 */
public final class BrokerAnnotations {
    private final ByteBuf pairs = new UnpooledHeapByteBuf(UnpooledByteBufAllocator.DEFAULT, 64, Integer.MAX_VALUE);
    private int[] keyIndexes = new int[4];
    private int count;

    public BrokerAnnotations clear() {
        pairs.clear();
        count = 0;
        return this;
    }

    public BrokerAnnotations put(CharSequence key, String value) {
        startPair(key);
        TypeWriter.writeString(pairs, value);
        return this;
    }

    public BrokerAnnotations put(CharSequence key, long value) {
        startPair(key);
        TypeWriter.writeLong(pairs, value);
        return this;
    }

    public BrokerAnnotations put(CharSequence key, boolean value) {
        startPair(key);
        TypeWriter.writeBoolean(pairs, value);
        return this;
    }

    /** Any value proton-j can encode ({@code Symbol}, {@code UnsignedInteger}, {@code Date}, maps…). */
    public BrokerAnnotations putObject(CharSequence key, Object value) {
        startPair(key);
        ProtonCodec.current().encode(value, pairs);
        return this;
    }

    private void startPair(CharSequence key) {
        for (int i = 0; i < count; i++) {
            if (isKey(i, key)) {
                throw new IllegalArgumentException("annotation " + key + " added twice");
            }
        }
        if (count == keyIndexes.length) {
            keyIndexes = Arrays.copyOf(keyIndexes, count * 2);
        }
        keyIndexes[count++] = pairs.writerIndex();
        TypeWriter.writeSymbol(pairs, key);
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** Number of key/value pairs. */
    public int size() {
        return count;
    }

    /** Bytes the encoded pairs take. */
    int encodedLength() {
        return pairs.readableBytes();
    }

    /** Appends the encoded pairs to {@code out}. */
    void writePairs(ByteBuf out) {
        TypeWriter.copy(out, pairs, pairs.readerIndex(), pairs.readableBytes());
    }

    /** True when the symbol key at {@code index} of {@code buf} (format code already checked) is one of ours. */
    boolean containsKey(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int keyEnd = TypeReader.valueEnd(buf, index, limit);
        int keyStart = TypeReader.variableContentStart(buf, index);
        int length = keyEnd - keyStart;
        for (int i = 0; i < count; i++) {
            int ours = keyIndexes[i];
            int oursStart = TypeReader.variableContentStart(pairs, ours);
            int oursLength = FormatCode.hasOneByteSize(pairs.getUnsignedByte(ours))
                ? pairs.getUnsignedByte(ours + 1) : pairs.getInt(ours + 1);
            if (oursLength == length && ByteBufUtil.equals(buf, keyStart, pairs, oursStart, length)) {
                return true;
            }
        }
        return false;
    }

    /** Whether our key {@code i} is {@code key}; reads our own, known-good encoding. */
    private boolean isKey(int i, CharSequence key) {
        int index = keyIndexes[i];
        try {
            return TypeReader.utf8Equals(pairs, pairs.getUnsignedByte(index), index, pairs.writerIndex(), key);
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException("broker annotations are corrupt", e);
        }
    }
}
