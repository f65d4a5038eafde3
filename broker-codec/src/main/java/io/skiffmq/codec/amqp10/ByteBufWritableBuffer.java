package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.qpid.proton.codec.ReadableBuffer;
import org.apache.qpid.proton.codec.WritableBuffer;

/**
 * Lets proton-j's encoder write straight into a Netty buffer at its writer index (proton back-fills list and
 * map sizes by moving {@link #position(int)} back and forth, which maps onto the writer index). Reused by
 * {@link ProtonCodec} through {@link #wrap}; not thread-safe.
 */
final class ByteBufWritableBuffer implements WritableBuffer {
    private ByteBuf buf;

    ByteBufWritableBuffer wrap(ByteBuf target) {
        this.buf = target;
        return this;
    }

    @Override
    public void put(byte b) {
        buf.writeByte(b);
    }

    @Override
    public void putFloat(float f) {
        buf.writeFloat(f);
    }

    @Override
    public void putDouble(double d) {
        buf.writeDouble(d);
    }

    @Override
    public void put(byte[] src, int offset, int length) {
        buf.writeBytes(src, offset, length);
    }

    @Override
    public void putShort(short s) {
        buf.writeShort(s);
    }

    @Override
    public void putInt(int i) {
        buf.writeInt(i);
    }

    @Override
    public void putLong(long l) {
        buf.writeLong(l);
    }

    @Override
    public boolean hasRemaining() {
        return buf.maxWritableBytes() > 0;
    }

    @Override
    public void ensureRemaining(int requiredRemaining) {
        buf.ensureWritable(requiredRemaining);
    }

    @Override
    public int remaining() {
        return buf.maxWritableBytes();
    }

    @Override
    public int position() {
        return buf.writerIndex();
    }

    @Override
    public void position(int position) {
        buf.ensureWritable(Math.max(0, position - buf.writerIndex()));
        buf.writerIndex(position);
    }

    @Override
    public void put(ByteBuffer payload) {
        buf.writeBytes(payload);
    }

    @Override
    public void put(ReadableBuffer payload) {
        while (payload.hasRemaining()) {
            buf.writeByte(payload.get());
        }
    }

    @Override
    public void put(String value) {
        buf.writeCharSequence(value, StandardCharsets.UTF_8);
    }

    @Override
    public int limit() {
        return buf.maxCapacity();
    }
}
