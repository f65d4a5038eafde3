package io.skiffmq.server.cluster;

import io.skiffmq.cluster.QueueGroup;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A queue group that commits at once whatever a live queue under test appends (its settles, returns). */
final class QuietGroup implements QueueGroup {
    @Override
    public String name() {
        return "g";
    }

    @Override
    public List<String> members() {
        return List.of("a");
    }

    @Override
    public String leader() {
        return "a";
    }

    @Override
    public CompletableFuture<Void> append(long epoch, byte[] command) {
        return CompletableFuture.completedFuture(null);
    }

    /** A live queue built from {@code replica} as a new leader builds it ({@link QueueReplica#restore}). */
    static io.skiffmq.core.queue.ClassicQueue liveQueue(QueueCommands.Key key, QueueReplica replica) {
        io.skiffmq.core.queue.ClassicQueue live = new io.skiffmq.core.queue.ClassicQueue(
            io.skiffmq.core.queue.QueueDeclaration.of(key.name(), true, java.util.Map.of("x-queue-type", "quorum")),
            io.skiffmq.core.queue.QueueExecutor.CALLER_THREAD,
            new ReplicatedQueueLog(new QuietGroup(), key, 1, io.skiffmq.core.queue.QueueExecutor.CALLER_THREAD,
                replica.enqueuers(), null, null, replica),
            Long.MAX_VALUE, io.skiffmq.core.queue.QueueContext.DEFAULT);
        QueueReplica.restore(live, replica.held());
        live.recovered();
        return live;
    }
}
