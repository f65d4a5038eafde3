package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.server.cluster.QueueMembership;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Pattern;
import tools.jackson.databind.ObjectMapper;

/**
 * RabbitMQ's quorum queue replica operations (docs/quorum-queues.md, "Changing members"), administrators only:
 * {@code POST /api/queues/quorum/{vhost}/{name}/replicas/add} and {@code DELETE .../replicas/delete} with
 * {@code {"node": ...}} (204 and 202; 503 with rabbit_quorum_queue's reason when refused), and
 * {@code POST /api/queues/quorum/replicas/on/{node}/grow} ({@code vhost_pattern}, {@code queue_pattern},
 * {@code strategy} {@code all} or {@code even}) and {@code DELETE .../shrink}, which answer once every queue was
 * tried, as RabbitMQ's, without saying how each went. On a single node a quorum queue's one member is this node.
 * Stateless.
 */
final class QuorumReplicaResources {
    /**
     * How long a member change may take: RabbitMQ's management agent gives it 30 s ({@code ?TIMEOUT}); a little
     * less here, so that skiffmqctl, which waits 30 s for an answer, hears how it ended.
     */
    static final Duration TIMEOUT = Duration.ofSeconds(25);

    private final Lookups lookups;
    private final ObjectMapper mapper;

    QuorumReplicaResources(Lookups lookups, ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.add("POST", "/api/queues/quorum/{vhost}/{name}/replicas/add", r -> change(r, true))
            .add("DELETE", "/api/queues/quorum/{vhost}/{name}/replicas/delete", r -> change(r, false))
            .add("POST", "/api/queues/quorum/replicas/on/{node}/grow", r -> all(r, true))
            .add("DELETE", "/api/queues/quorum/replicas/on/{node}/shrink", r -> all(r, false))
            .sync("POST", "/api/rebalance/queues", this::rebalance);
    }

    private QueueMembership membership() {
        return lookups.broker().cluster().queueMembership();
    }

    private CompletableFuture<ApiResponse> change(ApiRequest request, boolean add) {
        request.caller().requireAdministrator();
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        if (vhost.queue(name) == null && vhost.remoteQueue(name) == null) {
            throw ApiException.notFound();
        }
        String node = Bodies.required(request.json(mapper), "node");
        if (lookups.broker().cluster() == null) {
            return CompletableFuture.completedFuture(single(vhost, name, node, add));
        }
        QueueMembership membership = membership();
        try {
            return (add ? membership.add(vhost, name, node, TIMEOUT) : membership.delete(vhost, name, node, TIMEOUT))
                .handle((done, failure) -> {
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                            ? failure.getCause() : failure;
                        throw cause instanceof QueueMembership.Refused refused
                            ? ApiException.serviceUnavailable(refused.getMessage())
                            : new CompletionException(cause);
                    }
                    return add ? ApiResponse.noContent() : ApiResponse.accepted();
                });
        } catch (QueueMembership.Refused refused) {
            throw ApiException.serviceUnavailable(refused.getMessage());
        }
    }

    /**
     * RabbitMQ's {@code POST /api/rebalance/queues} (every replicated queue, 204); ours with a body of {@code type}
     * ({@code all}, {@code quorum}, {@code stream}), {@code vhost_pattern} and {@code queue_pattern}, as skiffmqctl
     * sends it, answers rabbit_amqqueue:rebalance/3's summary: each node leading some of those queues afterwards, and
     * how many. Answers once done (RabbitMQ's starts it and answers at once).
     */
    private ApiResponse rebalance(ApiRequest request) {
        request.caller().requireAdministrator();
        var body = request.json(mapper);
        String type = body.containsKey("type") ? Bodies.required(body, "type") : "all";
        if (!List.of("all", "quorum", "stream").contains(type)) {
            throw ApiException.badRequest("type " + type + " is not supported. Try one of all, quorum, stream.");
        }
        Pattern vhosts = Pattern.compile(body.containsKey("vhost_pattern") ? Bodies.required(body, "vhost_pattern")
            : ".*");
        Pattern names = Pattern.compile(body.containsKey("queue_pattern") ? Bodies.required(body, "queue_pattern")
            : ".*");
        Map<String, Integer> led = new java.util.LinkedHashMap<>();
        if (type.equals("stream")) {
            // a stream has its one node here: nothing to move
        } else if (lookups.broker().cluster() != null) {
            java.util.Set<String> visible = new java.util.HashSet<>();
            lookups.visibleVhosts(request.caller()).forEach(v -> visible.add(v.name()));
            led = lookups.broker().cluster().queueRebalance().run((vhost, name) -> visible.contains(vhost)
                && vhosts.matcher(vhost).find() && names.matcher(name).find());
        } else {
            for (VirtualHost vhost : lookups.visibleVhosts(request.caller())) {
                if (vhosts.matcher(vhost.name()).find()) {
                    for (io.skiffmq.core.queue.Queue queue : vhost.queues()) {
                        if (queue.type() == QueueType.QUORUM && names.matcher(queue.name()).find()) {
                            led.merge(lookups.node(), 1, Integer::sum);
                        }
                    }
                }
            }
        }
        if (!body.containsKey("type")) {
            return ApiResponse.noContent();
        }
        List<Map<String, Object>> rows = new java.util.ArrayList<>();
        led.forEach((node, n) -> rows.add(Map.of("node", node, "quorum_queues", n)));
        return ApiResponse.ok(rows);
    }

    /**
     * On a single node a quorum queue's one member is this node, as RabbitMQ's are on one node: adding it again or
     * deleting another is nothing to do, another node is not running, and this one is the last.
     */
    private ApiResponse single(VirtualHost vhost, String name, String node, boolean add) {
        io.skiffmq.core.queue.Queue queue = lookups.queue(vhost, name);
        String refused = queue.type() == QueueType.CLASSIC ? "classic_queue_not_supported"
            : queue.type() != QueueType.QUORUM ? "not_quorum_queue"
            : node.equals(lookups.node()) ? (add ? null : "last_node") : (add ? "node_not_running" : null);
        if (refused != null) {
            throw ApiException.serviceUnavailable(refused);
        }
        return add ? ApiResponse.noContent() : ApiResponse.accepted();
    }

    /** grow and shrink: each matching quorum queue in turn, its failure left out as RabbitMQ's HTTP API does. */
    private CompletableFuture<ApiResponse> all(ApiRequest request, boolean grow) {
        request.caller().requireAdministrator();
        String node = request.variable("node");
        Pattern vhostPattern = Pattern.compile(".*");
        Pattern queuePattern = Pattern.compile(".*");
        boolean even = false;
        if (grow) {
            var body = request.json(mapper);
            vhostPattern = Pattern.compile(Bodies.required(body, "vhost_pattern"));
            queuePattern = Pattern.compile(Bodies.required(body, "queue_pattern"));
            String strategy = Bodies.required(body, "strategy");
            if (!strategy.equals("all") && !strategy.equals("even")) {
                throw ApiException.badRequest("strategy '" + strategy + "' is not recognised.");
            }
            even = strategy.equals("even");
        }
        if (lookups.broker().cluster() == null) { // one member each, this node's: none to add, none to delete
            return CompletableFuture.completedFuture(grow ? ApiResponse.noContent() : ApiResponse.accepted());
        }
        CompletableFuture<Void> done = membership().changeAll(lookups.visibleVhosts(request.caller()), node, grow,
            vhostPattern, queuePattern, even, TIMEOUT);
        return done.thenApply(all -> grow ? ApiResponse.noContent() : ApiResponse.accepted());
    }
}
