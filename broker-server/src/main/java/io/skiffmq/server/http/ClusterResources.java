package io.skiffmq.server.http;

import io.skiffmq.cluster.ClusterStatus;
import io.skiffmq.cluster.NoMajorityException;
import io.skiffmq.server.cluster.ClusterMembership;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The cluster in the HTTP API: {@code /api/cluster-name} (RabbitMQ's, read by anyone who may log in and set by
 * administrators), and ours for what rabbitmqctl does over the Erlang distribution instead:
 * {@code /api/cluster-status} ({@code cluster_status}, {@code await_online_nodes}), {@code POST /api/cluster/join}
 * ({@code join_cluster}) and {@code DELETE /api/cluster/nodes/{node}} ({@code forget_cluster_node}). On a single node
 * the status describes that node alone and the changes are refused (400). A forgotten node is then taken out of
 * every quorum queue's members, as RabbitMQ's {@code forget_cluster_node} does. Stateless.
 */
final class ClusterResources {
    private static final java.util.regex.Pattern ANY = java.util.regex.Pattern.compile(".*");

    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    ClusterResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/cluster-name", r -> ApiResponse.ok(Map.of("name", lookups.broker().clusterName())))
            .sync("PUT", "/api/cluster-name", this::setName)
            .sync("GET", "/api/cluster-status", r -> {
                r.caller().requireMonitoring();
                return ApiResponse.ok(status());
            })
            .sync("POST", "/api/cluster/join", r -> {
                r.caller().requireAdministrator();
                String seed = Bodies.required(r.json(mapper), "node");
                try {
                    clustered().join(seed);
                } catch (IllegalArgumentException e) {
                    throw ApiException.badRequest(e.getMessage());
                } catch (java.io.IOException e) {
                    throw ApiException.unavailable(e.getMessage());
                }
                return ApiResponse.noContent();
            })
            .sync("DELETE", "/api/cluster/nodes/{node}", r -> {
                r.caller().requireAdministrator();
                String node = r.variable("node");
                ClusterMembership cluster = clustered();
                try {
                    cluster.forget(node);
                } catch (IllegalArgumentException e) {
                    throw ApiException.badRequest(e.getMessage());
                } catch (java.io.IOException e) {
                    throw ApiException.unavailable(e.getMessage());
                }
                // RabbitMQ's forget_cluster_node shrinks every quorum queue off the node (shrink_all); here it
                // goes on after the answer, which would otherwise wait a leader change per queue
                cluster.queueMembership().changeAll(lookups.visibleVhosts(r.caller()), node, false, ANY, ANY, false,
                    QuorumReplicaResources.TIMEOUT);
                return ApiResponse.noContent();
            });
    }

    private ClusterMembership clustered() {
        ClusterMembership cluster = lookups.broker().cluster();
        if (cluster == null) {
            throw ApiException.badRequest("this node is not part of a cluster (no cluster-port)");
        }
        return cluster;
    }

    private ApiResponse setName(ApiRequest request) {
        request.caller().requireAdministrator();
        String name = Bodies.required(request.json(mapper), "name");
        ClusterMembership cluster = clustered();
        try {
            cluster.setClusterName(name).get();
        } catch (ExecutionException | CompletionException e) {
            if (e.getCause() instanceof NoMajorityException noMajority) {
                throw ApiException.unavailable(noMajority.getMessage());
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        }
        return ApiResponse.noContent();
    }

    private Map<String, Object> status() {
        ClusterMembership cluster = lookups.broker().cluster();
        String self = lookups.node();
        ClusterStatus status = cluster != null ? cluster.status()
            : new ClusterStatus(self, self, List.of(self), List.of(self), self);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("cluster_name", status.clusterName());
        s.put("node", status.self());
        s.put("disk_nodes", status.members());
        s.put("running_nodes", status.running());
        s.put("leader", status.leader());
        List<Map<String, Object>> alarms = new ArrayList<>();
        // only this node's alarms are known here: the other nodes are not asked yet
        for (var alarm : lookups.broker().alarms().active()) {
            alarms.add(Map.of("node", self, "alarm",
                alarm == io.skiffmq.core.alarm.ResourceAlarms.Resource.MEMORY ? "memory" : "disk"));
        }
        s.put("alarms", alarms);
        return s;
    }
}
