package io.skiffmq.cluster;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;

/**
 * Ratis' single-file snapshot storage, without a directory listing on every append. Once a group has applied its
 * snapshot threshold, Ratis asks its state machine for a snapshot after every batch it applies, and cleans up the
 * old snapshot files after each ask, taken or declined ({@code StateMachineUpdater.takeSnapshot}); and the leader's
 * appenders read the latest snapshot on every round, which lists the directory for as long as a group has none. Our
 * machines decline most asks (a queue group snapshots by bytes), so under a load of small entries those listings
 * took about a tenth of every member's CPU. Here old files are cleaned up only after a new snapshot was recorded,
 * and a directory found without one is not listed again until one is recorded or loaded, except while the machine
 * is paused: a snapshot from the leader is being installed into the directory, and Ratis reads it before it
 * reloads the machine.
 *
 * <p>Thread-safe: a snapshot is recorded on the group's apply thread, read from the appenders' threads.
 */
final class SnapshotStorage extends SimpleStateMachineStorage {
    /** A snapshot was recorded since the last cleanup (true at start: clean once). */
    private final AtomicBoolean recorded = new AtomicBoolean(true);
    /** Counts the snapshots recorded and loads asked for; a listing that found none is good for its count only. */
    private final AtomicLong changes = new AtomicLong();
    private volatile long noneAt = -1;
    /** From {@link #paused} to the next load: the directory changes under Ratis, nothing is taken as known. */
    private volatile boolean paused;

    /** The machine is paused: the leader's snapshot is about to be installed. */
    void paused() {
        paused = true;
        changes.incrementAndGet();
    }

    @Override
    public void init(RaftStorage storage) throws IOException {
        changes.incrementAndGet();
        super.init(storage);
    }

    @Override
    public SingleFileSnapshotInfo updateLatestSnapshot(SingleFileSnapshotInfo info) {
        SingleFileSnapshotInfo latest = super.updateLatestSnapshot(info);
        if (info != null) {
            recorded.set(true);
            changes.incrementAndGet();
        }
        return latest;
    }

    @Override
    public SingleFileSnapshotInfo getLatestSnapshot() {
        long seen = changes.get();
        if (noneAt == seen && !paused) {
            return null;
        }
        SingleFileSnapshotInfo latest = super.getLatestSnapshot();
        if (latest == null && !paused) {
            noneAt = seen;
        }
        return latest;
    }

    /**
     * The latest snapshot, the directory listed again: as the machine reloads, a snapshot may have been installed
     * from the leader. (Not an override of {@link #loadLatestSnapshot}, which {@link #getLatestSnapshot} calls.)
     */
    SingleFileSnapshotInfo reload() {
        paused = false;
        changes.incrementAndGet();
        return loadLatestSnapshot();
    }

    @Override
    public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) throws IOException {
        if (recorded.getAndSet(false)) {
            super.cleanupOldSnapshots(policy);
        }
    }
}
