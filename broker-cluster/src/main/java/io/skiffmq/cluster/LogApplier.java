package io.skiffmq.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * What sits on a {@link MetadataLog}: the state that the log's entries build (the definitions store), on every node.
 * All three methods are called on one thread, the log's applier thread, never at the same time: the state is owned
 * by that thread, and readers elsewhere read what it publishes (a volatile snapshot, for instance).
 *
 * <p>The state lives in memory and is rebuilt at each start: an applier starts empty, is given the newest snapshot
 * if there is one ({@link #installSnapshot}), then every committed entry after it, in order ({@link #apply}). A node
 * that fell too far behind is given a newer snapshot the same way, which replaces everything it had.
 */
public interface LogApplier {
    /**
     * Applies one committed entry. Called in commit order, once per entry and index, on every node.
     *
     * @param index the entry's position in the log (increasing, not dense: the log has entries of its own)
     * @param entry the bytes given to {@link MetadataLog#append}, read-only; valid only during the call
     */
    void apply(long index, ByteBuffer entry);

    /** Writes the whole state as of the last entry applied, for the log to be cut short there. */
    void writeSnapshot(OutputStream out) throws IOException;

    /** Replaces the whole state by one {@link #writeSnapshot} wrote. */
    void installSnapshot(InputStream in) throws IOException;

    /**
     * Forgets the whole state: this node is joining a cluster ({@link ClusterNode#join}), whose snapshot and log it
     * then receives from the start.
     */
    void reset();
}
