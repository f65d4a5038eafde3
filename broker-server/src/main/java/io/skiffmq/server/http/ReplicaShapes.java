package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.server.cluster.ClusterMembership;
import io.skiffmq.server.cluster.ReplicatedQueues;
import java.util.List;
import java.util.Map;

/**
 * A replicated quorum queue's fields in {@code /api/queues}, as rabbit_quorum_queue's info keys: {@code leader}
 * (its group's leader), {@code members} and {@code online} (the members this node's cluster transport reaches now).
 * Stateless.
 */
final class ReplicaShapes {
    private ReplicaShapes() {
    }

    /** Puts the fields when {@code name} is a replicated queue of {@code vhost}; leaves {@code shape} alone otherwise. */
    static void put(Map<String, Object> shape, ClusterMembership cluster, VirtualHost vhost, String name,
            List<String> running) {
        QueueHomed record = cluster == null ? null : vhost.remoteQueue(name);
        if (record == null) {
            return;
        }
        ReplicatedQueues queues = cluster.queues();
        List<String> members = queues.members(vhost.name(), record);
        if (members == null) {
            return;
        }
        String leader = queues.leader(vhost.name(), record);
        shape.put("node", leader != null ? leader : record.node());
        shape.put("leader", leader != null ? leader : "");
        shape.put("members", members);
        shape.put("online", members.stream().filter(running::contains).toList());
    }

    /** The running members, asked once per answer, only when there is a cluster. */
    static List<String> running(ClusterMembership cluster) {
        return cluster == null ? List.of() : cluster.status().running();
    }
}
