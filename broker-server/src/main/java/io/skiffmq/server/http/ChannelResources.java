package io.skiffmq.server.http;

import io.skiffmq.server.connection.ChannelInfo;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.stream.StreamActivity;
import io.skiffmq.server.stream.StreamConnectionHandler;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code /api/channels} and {@code /api/consumers} (all, per virtual host, per connection, one channel by name; the
 * stream protocol's subscriptions among the consumers, as RabbitMQ lists them):
 * each visible connection is asked for its channels on its own event loop ({@link ClientConnection#channels}),
 * and the answer waits for all of them (at most {@value #WAIT_SECONDS} s), never blocking a thread. A channel's
 * name is RabbitMQ's: the connection's name and {@code (number)}. Stateless; safe from any thread.
 */
final class ChannelResources {
    static final int WAIT_SECONDS = 5;

    private final Lookups lookups;

    ChannelResources(Lookups lookups) {
        this.lookups = lookups;
    }

    void register(Router router) {
        router.add("GET", "/api/channels", r -> channels(r, null).thenApply(c -> Paging.list(c, r.query())))
            .add("GET", "/api/vhosts/{vhost}/channels", r -> channels(r, null)
                .thenApply(c -> Paging.list(c, r.query())))
            .add("GET", "/api/connections/{name}/channels", r -> channels(r, r.variable("name"))
                .thenApply(c -> Paging.list(c, r.query())))
            .add("GET", "/api/channels/{channel}", this::one)
            .add("GET", "/api/consumers", this::consumers)
            .add("GET", "/api/consumers/{vhost}", this::consumers);
    }

    /** A connection and what it said of its channels. */
    private record Described(ClientConnection connection, List<ChannelInfo> channels) {
    }

    /** The channels of the connections the caller sees, in the path's virtual host or connection if any. */
    private CompletableFuture<List<Described>> describe(ApiRequest request, String connectionName) {
        String vhost = request.variable("vhost");
        if (vhost != null) {
            lookups.vhost(request.caller(), vhost);
        }
        List<CompletableFuture<Described>> answers = new ArrayList<>();
        for (ClientConnection c : lookups.broker().connections()) {
            Access opened = c.opened();
            if (opened != null && ConnectionResources.sees(request.caller(), c)
                && (vhost == null || opened.vhost().equals(vhost))
                && (connectionName == null || Shapes.connectionName(c).equals(connectionName))) {
                answers.add(c.channels().orTimeout(WAIT_SECONDS, TimeUnit.SECONDS)
                    .exceptionally(e -> List.of()).thenApply(channels -> new Described(c, channels)));
            }
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
            .thenApply(done -> answers.stream().map(CompletableFuture::join).toList());
    }

    private CompletableFuture<List<Map<String, Object>>> channels(ApiRequest request, String connectionName) {
        return describe(request, connectionName).thenApply(described -> {
            List<Map<String, Object>> items = new ArrayList<>();
            for (Described d : described) {
                for (ChannelInfo channel : d.channels()) {
                    items.add(channel(d.connection(), channel));
                }
            }
            return items;
        });
    }

    private CompletableFuture<ApiResponse> one(ApiRequest request) {
        String name = request.variable("channel");
        return channels(request, null).thenApply(items -> items.stream()
            .filter(c -> name.equals(c.get("name"))).findFirst().map(ApiResponse::ok)
            .orElseThrow(ApiException::notFound));
    }

    private CompletableFuture<ApiResponse> consumers(ApiRequest request) {
        return describe(request, null).thenCombine(streamConsumers(request), (described, streams) -> {
            List<Map<String, Object>> items = new ArrayList<>();
            for (Described d : described) {
                for (ChannelInfo channel : d.channels()) {
                    for (ChannelInfo.Consumer consumer : channel.consumers()) {
                        items.add(consumer(d.connection(), channel, consumer));
                    }
                }
            }
            items.addAll(streams);
            return ApiResponse.ok(items);
        });
    }

    /**
     * The stream protocol's subscriptions, as {@code rabbit_stream_metrics:consumer_created/10} registers them with
     * the core metrics: tag {@code stream.subid-N}, no channel ({@code channel_details} empty), no acknowledgements
     * or prefetch, the subscription's properties as its arguments. Asked of each connection on its event loop.
     */
    private CompletableFuture<List<Map<String, Object>>> streamConsumers(ApiRequest request) {
        String vhost = request.variable("vhost");
        List<CompletableFuture<List<Map<String, Object>>>> answers = new ArrayList<>();
        for (ClientConnection c : lookups.broker().connections()) {
            Access opened = c.opened();
            if (c instanceof StreamConnectionHandler stream && opened != null
                    && ConnectionResources.sees(request.caller(), c)
                    && (vhost == null || opened.vhost().equals(vhost))) {
                answers.add(stream.activity().completeOnTimeout(StreamActivity.NONE, WAIT_SECONDS, TimeUnit.SECONDS)
                    .thenApply(activity -> activity.consumers().stream()
                        .map(consumer -> streamConsumer(opened.vhost(), consumer)).toList()));
            }
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
            .thenApply(done -> answers.stream().flatMap(answer -> answer.join().stream()).toList());
    }

    private static Map<String, Object> streamConsumer(String vhost, StreamActivity.Consumer consumer) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("consumer_tag", "stream.subid-" + consumer.subscriptionId());
        c.put("queue", Map.of("name", consumer.stream(), "vhost", vhost));
        c.put("channel_details", Map.of());
        c.put("ack_required", false);
        c.put("prefetch_count", 0);
        c.put("active", consumer.active());
        c.put("activity_status", consumer.activityStatus());
        c.put("arguments", consumer.properties());
        return c;
    }

    private Map<String, Object> channel(ClientConnection connection, ChannelInfo channel) {
        Access opened = connection.opened();
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("name", channelName(connection, channel));
        c.put("number", channel.number());
        c.put("node", lookups.node());
        c.put("state", "running");
        c.put("user", opened.user());
        c.put("vhost", opened.vhost());
        c.put("connection_details", connectionDetails(connection));
        c.put("prefetch_count", channel.prefetchCount());
        c.put("messages_unacknowledged", channel.unacknowledged());
        c.put("confirm", channel.confirm());
        c.put("transactional", channel.transactional());
        c.put("consumer_count", channel.consumers().size());
        return c;
    }

    private Map<String, Object> consumer(ClientConnection connection, ChannelInfo channel,
            ChannelInfo.Consumer consumer) {
        Access opened = connection.opened();
        Map<String, Object> details = new LinkedHashMap<>(connectionDetails(connection));
        details.put("connection_name", details.remove("name"));
        details.put("name", channelName(connection, channel));
        details.put("number", channel.number());
        details.put("user", opened.user());
        details.put("node", lookups.node());
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("consumer_tag", consumer.tag());
        c.put("queue", Map.of("name", consumer.queue(), "vhost", opened.vhost()));
        c.put("channel_details", details);
        c.put("ack_required", consumer.ackRequired());
        c.put("prefetch_count", consumer.prefetchCount());
        c.put("active", true);
        c.put("activity_status", "up");
        c.put("arguments", Map.of());
        return c;
    }

    private static String channelName(ClientConnection connection, ChannelInfo channel) {
        return Shapes.connectionName(connection) + " (" + channel.number() + ")";
    }

    private static Map<String, Object> connectionDetails(ClientConnection connection) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("name", Shapes.connectionName(connection));
        if (connection.remoteAddress() instanceof InetSocketAddress a) {
            d.put("peer_host", a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress());
            d.put("peer_port", a.getPort());
        }
        return d;
    }
}
