package io.skiffmq.server;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

/** A replicated quorum queue as a cluster's nodes show it in {@code /api/queues}: its leader, its members. */
final class QuorumQueueShapes {
    private QuorumQueueShapes() {
    }

    /** The queue's shape in node {@code i}'s {@code /api/queues}, once it shows a leader (within {@code wait}). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> withLeader(ChildCluster cluster, int i, String queue, Duration wait) {
        return await().atMost(wait).ignoreExceptions().until(() -> {
            var answer = cluster.api(i).get("/api/queues/%2F/" + queue);
            return (Map<String, Object>) answer.body();
        }, q -> q != null && q.get("leader") instanceof String leader && !leader.isEmpty());
    }

    /** The index of the cluster's node named {@code node}. */
    static int index(ChildCluster cluster, String node) {
        for (int i = 0; i < cluster.nodes.length; i++) {
            if (cluster.name(i).equals(node)) {
                return i;
            }
        }
        throw new AssertionError("no node " + node);
    }
}
