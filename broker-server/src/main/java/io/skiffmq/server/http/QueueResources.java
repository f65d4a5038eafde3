package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.server.peer.PeerLinks;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * {@code /api/queues}: list (all, per virtual host, paged), one, declare ({@code PUT}), delete, purge
 * ({@code DELETE .../contents}), get ({@code POST .../get}, {@link QueuePeek}) and a queue's bindings. Declaring
 * and deleting need the caller's configure permission, purge and get its read permission, as in RabbitMQ.
 * Stateless; safe from any thread.
 */
final class QueueResources {
    /**
     * The fields a declaration may hold: queue.declare's, and those RabbitMQ ignores that clients send:
     * {@code node} (one node can ignore it), rabbitmqadmin's {@code vhost} and {@code queue_type} (which it also
     * copies into {@code x-queue-type}).
     */
    private static final Set<String> DECLARE_FIELDS = Set.of("durable", "auto_delete", "exclusive", "arguments",
        "node", "vhost", "name", "type", "queue_type");

    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;
    private final RateSampler rates;

    QueueResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper, RateSampler rates) {
        this.lookups = lookups;
        this.rates = rates;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.add("GET", "/api/queues", this::list)
            .add("GET", "/api/queues/{vhost}", this::list)
            .add("GET", "/api/queues/{vhost}/{name}", this::one)
            .sync("PUT", "/api/queues/{vhost}/{name}", this::declare)
            .add("DELETE", "/api/queues/{vhost}/{name}", this::delete)
            .add("DELETE", "/api/queues/{vhost}/{name}/contents", this::purge)
            .add("POST", "/api/queues/{vhost}/{name}/get", this::get)
            .sync("GET", "/api/queues/{vhost}/{name}/bindings", this::bindings);
    }

    /**
     * Each queue's counts are read on its own thread; the answer waits for all of them. A page sorted by name is
     * chosen by name first, and only its queues are read.
     */
    private CompletableFuture<ApiResponse> list(ApiRequest request) {
        // each a Queue of this node or the QueueHomed record of one homed on another node
        List<Map.Entry<VirtualHost, Object>> queues = new ArrayList<>();
        for (VirtualHost vhost : lookups.vhosts(request)) {
            for (Queue queue : vhost.queues()) {
                queues.add(Map.entry(vhost, queue));
            }
            for (QueueHomed remote : vhost.remoteQueues()) {
                if (vhost.queue(remote.name()) == null) { // a replicated queue led here is listed as the queue
                    queues.add(Map.entry(vhost, remote));
                }
            }
        }
        List<String> running = replicated(queues) ? ReplicaShapes.running(lookups.broker().cluster()) : List.of();
        Paging.Page<Map.Entry<VirtualHost, Object>> page = Paging.byName(queues,
            e -> e.getValue() instanceof Queue q ? q.name() : ((QueueHomed) e.getValue()).name(), request.query());
        List<CompletableFuture<Map<String, Object>>> items = new ArrayList<>();
        for (Map.Entry<VirtualHost, Object> e : page == null ? queues : page.slice()) {
            items.add(e.getValue() instanceof Queue q ? describe(e.getKey(), q, running)
                : CompletableFuture.completedFuture(remoteShape(e.getKey(), (QueueHomed) e.getValue(), running)));
        }
        return CompletableFuture.allOf(items.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<Map<String, Object>> described = items.stream().map(CompletableFuture::join).toList();
            return page == null ? Paging.list(described, request.query())
                : Paging.answer(page, described, request.query());
        });
    }

    private CompletableFuture<ApiResponse> one(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        QueueHomed remote = vhost.queue(request.variable("name")) == null ? vhost.remoteQueue(request.variable("name"))
            : null;
        Queue local = remote == null ? lookups.queue(vhost, request.variable("name")) : null;
        List<String> running = vhost.remoteQueue(request.variable("name")) != null
            ? ReplicaShapes.running(lookups.broker().cluster()) : List.of();
        if (remote != null) {
            return CompletableFuture.completedFuture(ApiResponse.ok(remoteShape(vhost, remote, running)));
        }
        return describe(vhost, local, running).thenApply(ApiResponse::ok);
    }

    /** Whether any queue listed is on the shared log (and may be replicated): only then are the nodes asked. */
    private static boolean replicated(List<Map.Entry<VirtualHost, Object>> queues) {
        for (Map.Entry<VirtualHost, Object> e : queues) {
            String name = e.getValue() instanceof Queue q ? q.name() : ((QueueHomed) e.getValue()).name();
            QueueHomed record = e.getKey().remoteQueue(name);
            if (record != null && io.skiffmq.core.queue.QueueType.of(record.arguments())
                    == io.skiffmq.core.queue.QueueType.QUORUM) {
                return true;
            }
        }
        return false;
    }

    /**
     * A queue homed on another node: its record, its members where it is replicated, and its counts as its home node
     * last reported them (a few seconds old, docs/cluster.md), when they are known.
     */
    private Map<String, Object> remoteShape(VirtualHost vhost, QueueHomed remote, List<String> running) {
        Map<String, Object> shape = Shapes.remoteQueue(vhost.name(), remote);
        ReplicaShapes.put(shape, lookups.broker().cluster(), vhost, remote.name(), running);
        PeerLinks.HomeQueueCounts counts = PeerLinks.homeCounts(vhost, remote.name());
        if (counts != null) {
            shape.put("messages", counts.messages());
            shape.put("messages_ready", counts.ready());
            shape.put("messages_unacknowledged", counts.unacknowledged());
            shape.put("consumers", counts.consumers());
        }
        return shape;
    }

    private CompletableFuture<Map<String, Object>> describe(VirtualHost vhost, Queue queue, List<String> running) {
        return counts(queue, lookups.broker().config().management().countsTimeoutMillis())
            .thenApply(counts -> {
                Map<String, Object> shape = Shapes.queue(vhost.name(), queue, counts, lookups.node());
                shape.put("message_stats", rates.queue(queue));
                ReplicaShapes.put(shape, lookups.broker().cluster(), vhost, queue.name(), running);
                return shape;
            });
    }

    /**
     * The queue's counts from its own thread, or its gauges when that thread has not answered within
     * {@code timeoutMillis}: behind 100,000 count tasks, a full GC, or a stopping broker's queue that will never
     * answer. One late queue must not fail a listing of all of them; RabbitMQ's listings are statistics a moment old
     * too.
     */
    static CompletableFuture<QueueCounts> counts(Queue queue, long timeoutMillis) {
        return queue.counts().completeOnTimeout(null, timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
            .thenApply(counts -> counts != null ? counts
                : new QueueCounts(queue.readyCount(), queue.consumerCount(), queue.unackedCount()));
    }

    private ApiResponse declare(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        Map<String, Object> body = request.json(mapper);
        for (String field : body.keySet()) {
            if (!DECLARE_FIELDS.contains(field)) {
                throw ApiException.badRequest("unknown field '" + field + "'");
            }
        }
        if (name.isEmpty()) {
            throw ApiException.badRequest("declare queue with empty name not allowed");
        }
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.QUEUE, name);
        if (Boolean.TRUE.equals(body.get("exclusive"))) {
            // an exclusive queue would belong to the HTTP request, which ends at once
            throw ApiException.badRequest("exclusive queues cannot be declared through the HTTP API");
        }
        boolean existed = vhost.queue(name) != null;
        QueueDeclaration wanted = vhost.withDefaultType(new QueueDeclaration(name, flag(body, "durable", true), false,
            flag(body, "auto_delete", false), Bodies.arguments(body)));
        QueueHomed remote = existed ? null : vhost.remoteQueue(name);
        if (remote != null) {
            // homed on another node: known here
            if (!remote.declaration().equivalent(wanted)) {
                throw ApiException.badRequest("queue '" + name + "' exists as " + remote.declaration().describe());
            }
            return ApiResponse.createdOr(true);
        }
        vhost.declareQueue(wanted, this);
        return ApiResponse.createdOr(existed);
    }

    private CompletableFuture<ApiResponse> delete(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        if (vhost.queue(name) == null && vhost.remoteQueue(name) == null) {
            lookups.caughtUp(vhost); // declared on another node and not applied here yet?
        }
        if (vhost.queue(name) == null && vhost.remoteQueue(name) != null) {
            lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.QUEUE, name);
            CompletableFuture<Integer> deleted = vhost.deleteRemoteQueue(name); // its home node deletes it
            return deleted == null ? CompletableFuture.completedFuture(ApiResponse.noContent())
                : deleted.thenApply(n -> ApiResponse.noContent());
        }
        Queue queue = lookups.queue(vhost, request.variable("name"));
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.QUEUE, queue.name());
        if (Boolean.parseBoolean(request.query().get("if-empty")) && queue.readyCount() > 0
            || Boolean.parseBoolean(request.query().get("if-unused")) && queue.consumerCount() > 0) {
            throw ApiException.badRequest("queue '" + queue.name() + "' in vhost '" + vhost.name()
                + "' is in use or not empty");
        }
        CompletableFuture<Integer> deleted = vhost.deleteQueue(queue);
        return deleted == null ? CompletableFuture.completedFuture(ApiResponse.noContent())
            : deleted.thenApply(n -> ApiResponse.noContent());
    }

    private CompletableFuture<ApiResponse> purge(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        Queue queue = lookups.queue(vhost, request.variable("name"));
        lookups.require(request.caller(), vhost.name(), Permission.READ, Access.Resource.QUEUE, queue.name());
        vhost.checkAccess(queue, this);
        return queue.purge().thenApply(n -> ApiResponse.noContent());
    }

    private CompletableFuture<ApiResponse> get(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        Queue queue = vhost.queue(name);
        if (queue == null) { // one homed on another node (a quorum queue's leader there): taken through the link
            try {
                queue = PeerLinks.remote(vhost, name);
            } catch (io.skiffmq.core.BrokerException e) {
                throw ApiException.serviceUnavailable(e.getMessage());
            }
        }
        if (queue == null) {
            throw ApiException.notFound();
        }
        lookups.require(request.caller(), vhost.name(), Permission.READ, Access.Resource.QUEUE, queue.name());
        vhost.checkAccess(queue, this);
        Map<String, Object> body = request.json(mapper);
        QueuePeek peek = QueuePeek.of(body);
        return peek.run(queue).thenApply(ApiResponse::ok);
    }

    private ApiResponse bindings(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        Queue queue = lookups.queue(vhost, request.variable("name"));
        List<Map<String, Object>> items = new ArrayList<>();
        for (var binding : BindingResources.to(vhost, Destination.queue(queue.name()))) {
            items.add(Shapes.binding(vhost.name(), binding));
        }
        return ApiResponse.ok(items);
    }

    private static boolean flag(Map<String, Object> body, String name, boolean otherwise) {
        return Bodies.flag(body, name, otherwise);
    }
}
