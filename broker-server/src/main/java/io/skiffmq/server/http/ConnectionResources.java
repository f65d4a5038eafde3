package io.skiffmq.server.http;

import io.skiffmq.server.authz.Access;
import io.skiffmq.server.connection.ClientConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code /api/connections}: list (all, per virtual host, paged), one by name, and close one ({@code DELETE}, with
 * the {@code X-Reason} header as the reason the client is told: 0-9-1 320 CONNECTION_FORCED, AMQP 1.0
 * {@code amqp:connection:forced}). As in RabbitMQ, a user sees and closes its own connections; monitoring users
 * see all; administrators close any. Stateless; safe from any thread.
 */
final class ConnectionResources {
    /** RabbitMQ's reason when the request gives none. */
    static final String DEFAULT_REASON = "Closed via management plugin";

    private final Lookups lookups;
    private final RateSampler rates;

    ConnectionResources(Lookups lookups, RateSampler rates) {
        this.lookups = lookups;
        this.rates = rates;
    }

    void register(Router router) {
        router.add("GET", "/api/connections", this::list)
            .add("GET", "/api/vhosts/{vhost}/connections", this::list)
            .add("GET", "/api/connections/{name}", r -> describe(find(r, false)).thenApply(ApiResponse::ok))
            .sync("DELETE", "/api/connections/{name}", this::close);
    }

    static boolean sees(Caller caller, ClientConnection connection) {
        Access opened = connection.opened();
        return caller.monitoring() || opened != null && opened.user().equals(caller.user());
    }

    /** Each connection's channels are counted on its own event loop; the answer waits for all of them. */
    private CompletableFuture<ApiResponse> list(ApiRequest request) {
        String vhost = request.variable("vhost");
        if (vhost != null) {
            lookups.vhost(request.caller(), vhost);
        }
        List<CompletableFuture<Map<String, Object>>> items = new ArrayList<>();
        for (ClientConnection connection : lookups.broker().connections()) {
            Access opened = connection.opened();
            if (sees(request.caller(), connection) && (vhost == null || opened != null && opened.vhost().equals(vhost))) {
                items.add(describe(connection));
            }
        }
        return CompletableFuture.allOf(items.toArray(CompletableFuture[]::new))
            .thenApply(done -> Paging.list(items.stream().map(CompletableFuture::join).toList(), request.query()));
    }

    /** The connection's JSON with its {@code channels} count, read on its loop (0 when it does not answer). */
    CompletableFuture<Map<String, Object>> describe(ClientConnection connection) {
        return connection.channels().orTimeout(ChannelResources.WAIT_SECONDS, TimeUnit.SECONDS)
            .exceptionally(e -> List.of()).thenApply(channels -> {
                Map<String, Object> shape = Shapes.connection(connection, lookups.node());
                shape.put("channels", channels.size());
                shape.putAll(rates.connection(connection));
                return shape;
            });
    }

    /**
     * The connection named in the path that the caller may see (or, {@code toClose}, close): 404 for none, 401
     * when it is another user's and the caller may not.
     */
    ClientConnection find(ApiRequest request, boolean toClose) {
        return find(request, request.variable("name"), toClose, c -> true);
    }

    ClientConnection find(ApiRequest request, String name, boolean toClose,
            java.util.function.Predicate<ClientConnection> kind) {
        for (ClientConnection connection : lookups.broker().connections()) {
            if (Shapes.connectionName(connection).equals(name) && kind.test(connection)) {
                Access opened = connection.opened();
                boolean own = opened != null && opened.user().equals(request.caller().user());
                if (!own && !(toClose ? request.caller().administrator() : request.caller().monitoring())) {
                    throw ApiException.notAuthorised("User not authorised to access object");
                }
                return connection;
            }
        }
        throw ApiException.notFound();
    }

    private ApiResponse close(ApiRequest request) {
        return close(request, find(request, true));
    }

    static ApiResponse close(ApiRequest request, ClientConnection connection) {
        String reason = request.header("x-reason");
        connection.closeForced(reason == null || reason.isEmpty() ? DEFAULT_REASON : reason);
        return ApiResponse.noContent();
    }
}
