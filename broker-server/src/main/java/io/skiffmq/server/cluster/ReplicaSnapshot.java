package io.skiffmq.server.cluster;

import io.skiffmq.cluster.QueueGroupApplier.Snapshot;
import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A queue group's replicas in its snapshots (docs/quorum-queues.md, "Snapshots"): each replica's entries, then the
 * marks moves left on them, then the numbers taken from forwarding nodes; each later section absent from snapshots
 * written before it existed. Taken on the group's apply thread and written beside it: what it holds is immutable or
 * copied. Stateless.
 */
final class ReplicaSnapshot {
    private ReplicaSnapshot() {
    }

    /** The replicas as of now, to be written later on another thread. */
    static Snapshot take(Map<QueueCommands.Key, QueueReplica> replicas) {
        Map<QueueCommands.Key, HeldMessages> taken = new LinkedHashMap<>();
        Map<QueueCommands.Key, long[]> marks = new LinkedHashMap<>();
        Map<QueueCommands.Key, Enqueuers> numbers = new LinkedHashMap<>();
        replicas.forEach((key, replica) -> {
            taken.put(key, replica.held());
            Enqueuers enqueuers = replica.enqueuers();
            if (!enqueuers.isEmpty()) {
                numbers.put(key, enqueuers);
            }
            if (replica.frozen() != 0 || replica.adopted() != 0) {
                marks.put(key, new long[] {replica.frozen(), replica.adopted(), replica.sealed() ? 1 : 0});
            }
        });
        return out -> {
            out.writeInt(taken.size());
            for (Map.Entry<QueueCommands.Key, HeldMessages> replica : taken.entrySet()) {
                write(out, replica.getKey());
                HeldMessages held = replica.getValue();
                out.writeInt(held.size());
                for (int i = 0; i < held.size(); i++) {
                    held.write(i, out);
                }
            }
            // after the replicas (a snapshot without it has none): what moves left on them
            out.writeInt(marks.size());
            for (Map.Entry<QueueCommands.Key, long[]> mark : marks.entrySet()) {
                write(out, mark.getKey());
                out.writeLong(mark.getValue()[0]);
                out.writeLong(mark.getValue()[1]);
                out.writeBoolean(mark.getValue()[2] != 0);
            }
            // after the marks (a snapshot without it has none): the numbers taken from forwarding nodes
            out.writeInt(numbers.size());
            for (Map.Entry<QueueCommands.Key, Enqueuers> numbered : numbers.entrySet()) {
                write(out, numbered.getKey());
                numbered.getValue().write(out);
            }
        };
    }

    /** The replicas a snapshot holds. */
    static Map<QueueCommands.Key, QueueReplica> read(DataInput in) throws IOException {
        Map<QueueCommands.Key, QueueReplica> read = new HashMap<>();
        int count = in.readInt();
        for (int i = 0; i < count; i++) {
            QueueCommands.Key key = key(in);
            read.put(key, QueueReplica.read(in, in.readInt()));
        }
        // each later section may be missing from a snapshot written before it existed: members that could change,
        // then numbered publishes
        for (int marked = sectionCount(in); marked > 0; marked--) {
            QueueCommands.Key key = key(in);
            long frozen = in.readLong();
            long adopted = in.readLong();
            boolean sealed = in.readBoolean();
            QueueReplica replica = read.get(key);
            if (replica != null) {
                replica.marks(frozen, adopted, sealed);
            }
        }
        for (int numbered = sectionCount(in); numbered > 0; numbered--) {
            QueueCommands.Key key = key(in);
            Enqueuers taken = Enqueuers.read(in);
            QueueReplica replica = read.get(key);
            if (replica != null) {
                replica.enqueuers(taken);
            }
        }
        return read;
    }

    /** The count a later section starts with; 0 at the end of a snapshot written before the section existed. */
    private static int sectionCount(DataInput in) throws IOException {
        try {
            return in.readInt();
        } catch (EOFException e) {
            return 0;
        }
    }

    private static void write(DataOutputStream out, QueueCommands.Key key) throws IOException {
        out.writeUTF(key.vhost());
        out.writeUTF(key.name());
        out.writeLong(key.incarnation());
    }

    private static QueueCommands.Key key(DataInput in) throws IOException {
        return new QueueCommands.Key(in.readUTF(), in.readUTF(), in.readLong());
    }
}
