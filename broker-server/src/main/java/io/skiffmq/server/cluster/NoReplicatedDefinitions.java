package io.skiffmq.server.cluster;

import io.skiffmq.cluster.LogApplier;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * What the metadata log carries for the broker so far: nothing. Definitions are not replicated yet (docs/cluster.md,
 * "Not done yet"); the cluster's own entries (its name) are handled below the applier. An entry for the applier can
 * only come from a newer node, which this one cannot apply: it fails loudly rather than diverge. Stateless.
 */
final class NoReplicatedDefinitions implements LogApplier {
    @Override
    public void apply(long index, ByteBuffer entry) {
        throw new IllegalStateException("metadata entry " + index + " carries definitions, which this version does"
            + " not replicate: was it written by a newer node?");
    }

    @Override
    public void writeSnapshot(OutputStream out) {
        // no state
    }

    @Override
    public void installSnapshot(InputStream in) throws IOException {
        if (in.read() != -1) {
            throw new IOException("the metadata snapshot carries definitions, which this version does not replicate");
        }
    }

    @Override
    public void reset() {
        // no state
    }
}
