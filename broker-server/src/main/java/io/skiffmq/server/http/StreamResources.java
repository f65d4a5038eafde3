package io.skiffmq.server.http;

import io.skiffmq.server.authz.Access;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.stream.GroupMember;
import io.skiffmq.server.stream.StreamActivity;
import io.skiffmq.server.stream.StreamConnectionHandler;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The endpoints of RabbitMQ's {@code rabbitmq_stream_management} plugin: {@code /api/stream/connections} (all, per
 * virtual host, one, its {@code publishers} and {@code consumers}, {@code DELETE} to close it),
 * {@code /api/stream/publishers} (all, per virtual host, per stream) and {@code /api/stream/consumers} (all, per
 * virtual host), with the plugin's fields; and ours, {@code /api/stream/groups/{vhost}/{stream}/{reference}}, a
 * single active consumer group's members (what {@code rabbit_stream_sac_coordinator:group_consumers} answers
 * {@code list_stream_group_consumers}), and {@code /api/stream/status/{vhost}/{stream}}, its members' counters as
 * {@code rabbit_stream_queue:status/2} answers {@code stream_status}. Each stream connection is asked on its own event loop
 * ({@link StreamConnectionHandler#activity}), never blocking a thread. Visibility as RabbitMQ's: a user sees its own
 * connections and their publishers and consumers, monitoring users all. Stateless; safe from any thread.
 */
final class StreamResources {
    private final Lookups lookups;
    private final ConnectionResources connections;

    StreamResources(Lookups lookups, ConnectionResources connections) {
        this.lookups = lookups;
        this.connections = connections;
    }

    void register(Router router) {
        router.add("GET", "/api/stream/connections", this::listConnections)
            .add("GET", "/api/stream/connections/{vhost}", this::listConnections)
            .add("GET", "/api/stream/connections/{vhost}/{name}", r -> describe(find(r, false))
                .thenApply(ApiResponse::ok))
            .sync("DELETE", "/api/stream/connections/{vhost}/{name}", r -> ConnectionResources.close(r,
                find(r, true)))
            .add("GET", "/api/stream/connections/{vhost}/{name}/publishers", r -> entities(r, List.of(find(r,
                false)), null, StreamResources::publishers))
            .add("GET", "/api/stream/connections/{vhost}/{name}/consumers", r -> entities(r, List.of(find(r,
                false)), null, StreamResources::consumers))
            .add("GET", "/api/stream/publishers", r -> entities(r, visible(r), null, StreamResources::publishers))
            .add("GET", "/api/stream/publishers/{vhost}", r -> entities(r, visible(r), null,
                StreamResources::publishers))
            .add("GET", "/api/stream/publishers/{vhost}/{queue}", this::streamPublishers)
            .add("GET", "/api/stream/consumers", r -> entities(r, visible(r), null, StreamResources::consumers))
            .add("GET", "/api/stream/consumers/{vhost}", r -> entities(r, visible(r), null,
                StreamResources::consumers))
            .sync("GET", "/api/stream/groups/{vhost}/{stream}/{reference}", this::group)
            .sync("GET", "/api/stream/status/{vhost}/{stream}", this::status)
            .sync("GET", "/api/stream/tracking/{vhost}/{stream}", this::tracking);
    }

    /** The stream connections the caller sees, in the path's virtual host if any. */
    private List<StreamConnectionHandler> visible(ApiRequest request) {
        String vhost = request.variable("vhost");
        if (vhost != null) {
            lookups.vhost(request.caller(), vhost);
        }
        List<StreamConnectionHandler> visible = new ArrayList<>();
        for (ClientConnection c : lookups.broker().connections()) {
            Access opened = c.opened();
            if (c instanceof StreamConnectionHandler stream && opened != null
                    && ConnectionResources.sees(request.caller(), c)
                    && (vhost == null || opened.vhost().equals(vhost))) {
                visible.add(stream);
            }
        }
        return visible;
    }

    private StreamConnectionHandler find(ApiRequest request, boolean toClose) {
        String vhost = request.variable("vhost");
        lookups.vhost(request.caller(), vhost);
        return (StreamConnectionHandler) connections.find(request, request.variable("name"), toClose,
            c -> c instanceof StreamConnectionHandler && c.opened() != null && c.opened().vhost().equals(vhost));
    }

    private CompletableFuture<ApiResponse> listConnections(ApiRequest request) {
        List<CompletableFuture<Map<String, Object>>> items = new ArrayList<>();
        for (StreamConnectionHandler connection : visible(request)) {
            items.add(describe(connection));
        }
        return CompletableFuture.allOf(items.toArray(CompletableFuture[]::new))
            .thenApply(done -> Paging.list(items.stream().map(CompletableFuture::join).toList(), request.query()));
    }

    /** The connection as {@code /api/connections} shows it, with what RabbitMQ's stream reader adds. */
    private CompletableFuture<Map<String, Object>> describe(StreamConnectionHandler connection) {
        return connections.describe(connection).thenCombine(activity(connection), (shape, activity) -> {
            shape.put("subscriptions", activity.consumers().size());
            shape.put("connection_state", activity.blocked() ? "blocked" : "running");
            return shape;
        });
    }

    private static CompletableFuture<StreamActivity> activity(StreamConnectionHandler connection) {
        return connection.activity().completeOnTimeout(StreamActivity.NONE,
            ChannelResources.WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private CompletableFuture<ApiResponse> streamPublishers(ApiRequest request) {
        lookups.queue(lookups.vhost(request.caller(), request.variable("vhost")), request.variable("queue"));
        return entities(request, visible(request), request.variable("queue"), StreamResources::publishers);
    }

    /** What one connection's activity lists, as objects. */
    private interface Entities extends Function<StreamActivity, List<Map<String, Object>>> {
    }

    private CompletableFuture<ApiResponse> entities(ApiRequest request, List<StreamConnectionHandler> from,
            String stream, Entities entities) {
        List<CompletableFuture<List<Map<String, Object>>>> answers = new ArrayList<>();
        for (StreamConnectionHandler connection : from) {
            answers.add(activity(connection).thenApply(activity -> {
                List<Map<String, Object>> items = new ArrayList<>();
                for (Map<String, Object> fields : entities.apply(activity)) {
                    Object name = fields.remove("stream");
                    if (stream == null || stream.equals(name)) {
                        // as the plugin's objects: the stream and the connection first
                        Map<String, Object> item = new LinkedHashMap<>();
                        item.put("queue", Map.of("name", name, "vhost", connection.opened().vhost()));
                        item.put("connection_details", connectionDetails(connection));
                        item.putAll(fields);
                        items.add(item);
                    }
                }
                return items;
            }));
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<Map<String, Object>> all = new ArrayList<>();
            answers.forEach(a -> all.addAll(a.join()));
            return ApiResponse.ok(all);
        });
    }

    /** {@code rabbit_stream_mgmt_db}'s publisher: its stream, id, reference and counts. */
    private static List<Map<String, Object>> publishers(StreamActivity activity) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (StreamActivity.Publisher p : activity.publishers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("stream", p.stream());
            m.put("publisher_id", p.id());
            m.put("reference", p.reference());
            m.put("published", p.published());
            m.put("confirmed", p.confirmed());
            m.put("errored", p.errored());
            items.add(m);
        }
        return items;
    }

    /** {@code rabbit_stream_mgmt_db}'s consumer: its stream, subscription id and {@code consumer_created} values. */
    private static List<Map<String, Object>> consumers(StreamActivity activity) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (StreamActivity.Consumer c : activity.consumers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("stream", c.stream());
            m.put("subscription_id", c.subscriptionId());
            m.put("credits", c.credits());
            m.put("consumed", c.consumed());
            m.put("offset", c.offset());
            m.put("offset_lag", c.offsetLag());
            m.put("active", c.active());
            m.put("activity_status", c.activityStatus());
            m.put("properties", c.properties());
            items.add(m);
        }
        return items;
    }

    /** {@code rabbit_stream_mgmt_db:augment_connection_pid}: the connection's name, user, node and peer. */
    private Map<String, Object> connectionDetails(ClientConnection connection) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("name", Shapes.connectionName(connection));
        d.put("user", connection.opened().user());
        d.put("node", lookups.node());
        if (connection.remoteAddress() instanceof InetSocketAddress a) {
            d.put("peer_port", a.getPort());
            d.put("peer_host", a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress());
        }
        return d;
    }

    /**
     * A group's members, in its order, as {@code list_stream_group_consumers} shows them: the subscription id, the
     * connection's name and {@code active (connected)} or {@code waiting (connected)}; 404 for no such group. The
     * groups span the stream connections, so any of them answers; with none there is no group.
     */
    private ApiResponse group(ApiRequest request) {
        String vhost = request.variable("vhost");
        lookups.vhost(request.caller(), vhost);
        if (!request.caller().monitoring()) {
            throw ApiException.notAuthorised("User not authorised to access object");
        }
        List<Map<String, Object>> members = new ArrayList<>();
        for (ClientConnection c : lookups.broker().connections()) {
            if (c instanceof StreamConnectionHandler stream) {
                for (GroupMember member : stream.groupMembers(vhost, request.variable("stream"))) {
                    if (member.name().equals(request.variable("reference"))) {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("subscription_id", member.subscriptionId());
                        m.put("connection_name", member.connection());
                        m.put("state", (member.active() ? "active" : "waiting") + " (connected)");
                        members.add(m);
                    }
                }
                break;
            }
        }
        if (members.isEmpty()) {
            throw ApiException.notFound();
        }
        return ApiResponse.ok(members);
    }

    /**
     * {@code rabbit_stream_queue:status/2}: a row per member (here the writer alone) with osiris' counters; 400 for a
     * queue of another type, in RabbitMQ's words.
     */
    private ApiResponse status(ApiRequest request) {
        String node = lookups.node();
        io.skiffmq.core.stream.StreamQueue stream = streamForStatus(request);
        io.skiffmq.store.stream.StreamLog log = ((io.skiffmq.store.stream.StreamLogStore) stream.store()).log();
        Map<String, Object> writer = new LinkedHashMap<>();
        writer.put("role", "writer");
        writer.put("node", node);
        writer.put("epoch", log.epoch());
        writer.put("offset", log.committedOffset());
        writer.put("committed_offset", log.committedOffset());
        writer.put("committed_chunk_id", log.committedChunkId());
        writer.put("first_offset", log.firstOffset());
        writer.put("readers", stream.consumerCount());
        writer.put("segments", log.segmentCount());
        return ApiResponse.ok(List.of(writer));
    }

    /** The stream the path names; 400 for a queue of another type, in RabbitMQ's words. */
    private io.skiffmq.core.stream.StreamQueue streamForStatus(ApiRequest request) {
        io.skiffmq.core.queue.Queue queue = lookups.queue(lookups.vhost(request.caller(), request.variable("vhost")),
            request.variable("stream"));
        if (!(queue instanceof io.skiffmq.core.stream.StreamQueue stream)) {
            throw ApiException.badRequest("Cannot get stream status of a " + queue.type().alias() + " queue");
        }
        return stream;
    }

    /**
     * {@code rabbit_stream_queue:tracking_status/2} ({@code stream_status --tracking}): a row per stored offset
     * ({@code offset}, the consumer's name, the offset) and per producer with a publishing id in the log
     * ({@code sequence}, its reference, the id, and the chunk holding it, which osiris keeps beside it).
     */
    private ApiResponse tracking(ApiRequest request) {
        io.skiffmq.store.stream.StreamLog log = ((io.skiffmq.store.stream.StreamLogStore) streamForStatus(request)
            .store()).log();
        List<Map<String, Object>> rows = new java.util.ArrayList<>();
        new java.util.TreeMap<>(log.storedOffsets()).forEach((name, offset) -> rows.add(
            Map.of("type", "offset", "reference", name, "value", offset)));
        log.trackedPublishers().stream()
            .sorted(java.util.Comparator.comparing(io.skiffmq.store.stream.TrackedPublisher::reference))
            .forEach(p -> rows.add(Map.of("type", "sequence", "reference", p.reference(), "value", p.sequence(),
                "chunk_id", p.chunkId())));
        return ApiResponse.ok(rows);
    }
}
