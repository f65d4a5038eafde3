package io.skiffmq.cluster;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An applier whose state is the list of entries applied, as strings: what the tests compare across nodes. Written
 * on the log's applier thread; {@link #entries} gives readers a copy.
 */
final class RecordingApplier implements LogApplier {
    private final List<String> entries = new ArrayList<>();
    final AtomicInteger snapshotsInstalled = new AtomicInteger();
    final AtomicInteger snapshotsWritten = new AtomicInteger();
    private long lastIndex;

    @Override
    public synchronized void apply(long index, ByteBuffer entry) {
        if (index <= lastIndex) {
            throw new AssertionError("index " + index + " applied after " + lastIndex);
        }
        lastIndex = index;
        byte[] bytes = new byte[entry.remaining()];
        entry.get(bytes);
        entries.add(new String(bytes, StandardCharsets.UTF_8));
    }

    @Override
    public synchronized void writeSnapshot(OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(out);
        data.writeInt(entries.size());
        for (String entry : entries) {
            data.writeUTF(entry);
        }
        data.flush();
        snapshotsWritten.incrementAndGet();
    }

    @Override
    public synchronized void installSnapshot(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        entries.clear();
        for (int n = data.readInt(); n > 0; n--) {
            entries.add(data.readUTF());
        }
        lastIndex = 0;
        snapshotsInstalled.incrementAndGet();
    }

    @Override
    public synchronized void reset() {
        entries.clear();
        lastIndex = 0;
    }

    synchronized List<String> entries() {
        return List.copyOf(entries);
    }
}
