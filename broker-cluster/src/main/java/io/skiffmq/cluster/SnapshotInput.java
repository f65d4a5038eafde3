package io.skiffmq.cluster;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A snapshot file's bytes, read as {@link DataInput} (big-endian, as {@code DataOutputStream} wrote them) straight
 * from an array it fills from the file: a long is one read of the array, where {@link DataInputStream} made it from
 * eight bytes copied through its stream, and a restart reads millions (a fifth of a restarted member's samples).
 * Also an {@link InputStream}, for a state that reads its part as one. It takes no more than {@code length} bytes
 * from {@code in}: a file's trailer is not its reader's. Used by one thread.
 */
final class SnapshotInput extends InputStream implements DataInput {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORTS = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);

    private final InputStream in;
    private final byte[] buffer;
    private int position;
    private int limit;
    /** What may still be taken from {@code in}. */
    private long unread;

    SnapshotInput(InputStream in, long length, int bufferBytes) {
        this.in = in;
        this.unread = length;
        this.buffer = new byte[Math.max(Long.BYTES, bufferBytes)];
    }

    /** Makes {@code n} bytes (at most 8) readable at {@link #position}, or throws at the end. */
    private void need(int n) throws IOException {
        if (limit - position >= n) {
            return;
        }
        int kept = limit - position;
        System.arraycopy(buffer, position, buffer, 0, kept);
        position = 0;
        limit = kept;
        while (limit < n) {
            int read = take(buffer, limit, buffer.length - limit);
            if (read < 0) {
                throw new EOFException();
            }
            limit += read;
        }
    }

    /** Reads from {@code in}, within what may be taken: -1 at the end. */
    private int take(byte[] into, int offset, int length) throws IOException {
        if (unread == 0) {
            return -1;
        }
        int n = in.read(into, offset, (int) Math.min(length, unread));
        if (n > 0) {
            unread -= n;
        }
        return n;
    }

    @Override
    public int read() throws IOException {
        if (position == limit && !fill()) {
            return -1;
        }
        return buffer[position++] & 0xFF;
    }

    @Override
    public int read(byte[] into, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (position == limit) {
            if (length >= buffer.length) { // a large read goes past the buffer
                return take(into, offset, length);
            }
            if (!fill()) {
                return -1;
            }
        }
        int n = Math.min(length, limit - position);
        System.arraycopy(buffer, position, into, offset, n);
        position += n;
        return n;
    }

    private boolean fill() throws IOException {
        int n = take(buffer, 0, buffer.length);
        position = 0;
        limit = Math.max(n, 0);
        return n > 0;
    }

    /** Skips by reading through the buffer: what is skipped is checked as what is read. */
    @Override
    public long skip(long n) throws IOException {
        long skipped = 0;
        while (skipped < n && (position < limit || fill())) {
            int step = (int) Math.min(n - skipped, limit - position);
            position += step;
            skipped += step;
        }
        return skipped;
    }

    @Override
    public int available() {
        return limit - position;
    }

    @Override
    public void readFully(byte[] into) throws IOException {
        readFully(into, 0, into.length);
    }

    @Override
    public void readFully(byte[] into, int offset, int length) throws IOException {
        while (length > 0) {
            int n = read(into, offset, length);
            if (n < 0) {
                throw new EOFException();
            }
            offset += n;
            length -= n;
        }
    }

    @Override
    public int skipBytes(int n) throws IOException {
        return (int) skip(n);
    }

    @Override
    public boolean readBoolean() throws IOException {
        return readByte() != 0;
    }

    @Override
    public byte readByte() throws IOException {
        need(1);
        return buffer[position++];
    }

    @Override
    public int readUnsignedByte() throws IOException {
        return readByte() & 0xFF;
    }

    @Override
    public short readShort() throws IOException {
        need(Short.BYTES);
        short v = (short) SHORTS.get(buffer, position);
        position += Short.BYTES;
        return v;
    }

    @Override
    public int readUnsignedShort() throws IOException {
        return readShort() & 0xFFFF;
    }

    @Override
    public char readChar() throws IOException {
        return (char) readShort();
    }

    @Override
    public int readInt() throws IOException {
        need(Integer.BYTES);
        int v = (int) INTS.get(buffer, position);
        position += Integer.BYTES;
        return v;
    }

    @Override
    public long readLong() throws IOException {
        need(Long.BYTES);
        long v = (long) LONGS.get(buffer, position);
        position += Long.BYTES;
        return v;
    }

    @Override
    public float readFloat() throws IOException {
        return Float.intBitsToFloat(readInt());
    }

    @Override
    public double readDouble() throws IOException {
        return Double.longBitsToDouble(readLong());
    }

    /** Not in any snapshot: {@link DataInputStream#readLine} is deprecated for good reason. */
    @Override
    public String readLine() {
        throw new UnsupportedOperationException("readLine");
    }

    @Override
    public String readUTF() throws IOException {
        return DataInputStream.readUTF(this);
    }
}
