package io.skiffmq.cluster;

import java.util.List;

/**
 * The cluster as one node sees it, for {@code cluster_status} and the HTTP API. Immutable.
 *
 * @param clusterName the name set with {@code set_cluster_name}, else the first member's name
 * @param self this node's name
 * @param members every member of the metadata group, by name (RabbitMQ's disk nodes), sorted
 * @param running the members that answered this node just now, itself included, sorted
 * @param leader the metadata leader's name, or null while there is none
 */
public record ClusterStatus(String clusterName, String self, List<String> members, List<String> running,
        String leader) {
}
