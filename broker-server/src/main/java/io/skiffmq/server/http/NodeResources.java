package io.skiffmq.server.http;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.alarm.JvmReadings;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.server.Broker;
import io.skiffmq.server.config.BrokerConfig;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The node as a whole: {@code /api/overview}, {@code /api/nodes}, {@code /api/whoami}. The overview counts only
 * what the caller may see; nodes are for monitoring users, as in RabbitMQ. Stateless apart from the readings;
 * safe from any thread.
 */
final class NodeResources {
    private final Lookups lookups;
    private final Supplier<List<Listener>> listeners;
    private final JvmReadings readings;
    private final RateSampler rates;
    /** The other members' readings, in a cluster; null on a single node. */
    private final MemberReadings members;

    NodeResources(Lookups lookups, Supplier<List<Listener>> listeners, RateSampler rates,
            tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.rates = rates;
        this.listeners = listeners;
        try {
            this.readings = new JvmReadings(lookups.broker().config().dataDir());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        var cluster = lookups.broker().cluster();
        this.members = cluster == null ? null : new MemberReadings(cluster, mapper, this::node);
    }

    void register(Router router) {
        router.add("GET", "/api/overview", this::overview)
            .sync("GET", "/api/whoami", this::whoami)
            .sync("GET", "/api/nodes", r -> {
                r.caller().requireMonitoring();
                return ApiResponse.ok(nodes());
            })
            .sync("GET", "/api/nodes/{node}", r -> {
                r.caller().requireMonitoring();
                return ApiResponse.ok(nodes().stream().filter(n -> n.get("name").equals(r.variable("node")))
                    .findFirst().orElseThrow(ApiException::notFound));
            });
    }

    /**
     * This node, and in a cluster every member of it, sorted by name, as RabbitMQ lists them: another member that
     * answered this node just now (asking takes up to two seconds) with its own readings ({@link MemberReadings},
     * up to five seconds old), one that did not by its name, type and {@code running: false}.
     */
    private List<Map<String, Object>> nodes() {
        if (members == null) {
            return List.of(node());
        }
        io.skiffmq.cluster.ClusterStatus status = lookups.broker().cluster().status();
        List<String> others = status.members().stream()
            .filter(m -> !m.equals(lookups.node()) && status.running().contains(m)).toList();
        Map<String, Map<String, Object>> answered = new java.util.HashMap<>();
        for (Map<String, Object> n : members.of(others, NodeResources::unread)) {
            answered.put((String) n.get("name"), n);
        }
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (String member : status.members()) {
            if (member.equals(lookups.node())) {
                nodes.add(node());
            } else if (answered.containsKey(member)) {
                nodes.add(answered.get(member));
            } else {
                Map<String, Object> n = unread(member);
                n.put("running", false);
                nodes.add(n);
            }
        }
        return nodes;
    }

    /** A member whose readings this node does not have: as RabbitMQ shows a node that is down. */
    private static Map<String, Object> unread(String member) {
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("name", member);
        n.put("type", "disc");
        n.put("running", true); // it answered the ping just before
        n.put("being_drained", false);
        return n;
    }

    private ApiResponse whoami(ApiRequest request) {
        Map<String, Object> me = new LinkedHashMap<>();
        me.put("name", request.caller().user());
        me.put("tags", request.caller().tags());
        return ApiResponse.ok(me);
    }

    /** Queue counts are read on each queue's thread ({@link QueueResources#counts}); the answer waits for all. */
    private CompletableFuture<ApiResponse> overview(ApiRequest request) {
        Caller caller = request.caller();
        long exchanges = 0;
        List<CompletableFuture<QueueCounts>> counts = new ArrayList<>();
        List<String> visible = new ArrayList<>();
        for (VirtualHost vhost : lookups.visibleVhosts(caller)) {
            visible.add(vhost.name());
            for (Queue queue : vhost.queues()) {
                counts.add(QueueResources.counts(queue, lookups.broker().config().management().countsTimeoutMillis()));
            }
            exchanges += vhost.exchanges().size();
        }
        long connections = lookups.broker().connections().stream()
            .filter(c -> ConnectionResources.sees(caller, c)).count();
        long exchangeCount = exchanges;
        return CompletableFuture.allOf(counts.toArray(CompletableFuture[]::new)).thenApply(done -> {
            long consumers = 0;
            long ready = 0;
            long unacknowledged = 0;
            for (CompletableFuture<QueueCounts> c : counts) {
                QueueCounts q = c.join();
                consumers += q.consumers();
                ready += q.ready();
                unacknowledged += q.unacknowledged();
            }
            BrokerConfig config = lookups.broker().config();
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("management_version", BrokerConfig.SKIFFMQ_VERSION);
            o.put("rates_mode", "basic");
            o.put("exchange_types", exchangeTypes());
            o.put("product_version", BrokerConfig.SKIFFMQ_VERSION);
            o.put("product_name", "SkiffMQ");
            o.put("rabbitmq_version", config.rabbitmqVersion());
            o.put("cluster_name", lookups.broker().clusterName());
            o.put("node", config.node());
            // ours: RabbitMQ's overview has no node state; as /api/nodes' running, false once the node is stopping
            o.put("running", !lookups.broker().isStopping());
            // a user who sees only some virtual hosts gets theirs summed, as in RabbitMQ
            o.put("message_stats", caller.monitoring() ? rates.overview() : rates.overviewOf(visible));
            o.put("object_totals", Map.of("connections", connections, "exchanges", exchangeCount,
                "queues", counts.size(), "consumers", consumers));
            o.put("queue_totals", Map.of("messages", ready + unacknowledged, "messages_ready", ready,
                "messages_unacknowledged", unacknowledged));
            o.put("listeners", listenerList());
            return ApiResponse.ok(o);
        });
    }

    private static List<Map<String, Object>> exchangeTypes() {
        List<Map<String, Object>> types = new ArrayList<>();
        for (Exchange.Type type : Exchange.Type.values()) {
            types.add(Map.of("name", type.value(), "description", type.description(), "enabled", true));
        }
        return types;
    }

    private List<Map<String, Object>> listenerList() {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Listener listener : listeners.get()) {
            InetSocketAddress address = listener.address();
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("node", lookups.node());
            l.put("protocol", listener.protocol());
            l.put("ip_address", address.getAddress().getHostAddress());
            l.put("port", address.getPort());
            list.add(l);
        }
        return list;
    }

    private Map<String, Object> node() {
        Broker broker = lookups.broker();
        var alarms = broker.alarms().active();
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("name", lookups.node());
        n.put("type", "disc");
        // false from the start of a graceful shutdown (the HTTP API is the last to close)
        n.put("running", !broker.isStopping());
        n.put("being_drained", false);
        n.put("mem_used", readings.memoryUsed());
        n.put("mem_limit", broker.resourceMonitor().memoryLimit());
        n.put("mem_alarm", alarms.contains(ResourceAlarms.Resource.MEMORY));
        n.put("disk_free", readings.diskFree());
        n.put("disk_free_limit", broker.resourceMonitor().diskFreeLimit());
        n.put("disk_free_alarm", alarms.contains(ResourceAlarms.Resource.DISK));
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os) {
            n.put("fd_used", os.getOpenFileDescriptorCount());
            n.put("fd_total", os.getMaxFileDescriptorCount());
        }
        // RabbitMQ's sockets are its client connections; its processes are Erlang's, here the JVM's threads
        n.put("sockets_used", broker.connections().size());
        n.put("proc_used", ManagementFactory.getThreadMXBean().getThreadCount());
        n.put("processors", Runtime.getRuntime().availableProcessors());
        n.put("uptime", ManagementFactory.getRuntimeMXBean().getUptime());
        n.put("os_pid", String.valueOf(ProcessHandle.current().pid()));
        n.put("partitions", List.of());
        n.put("rates_mode", "basic");
        return n;
    }
}
