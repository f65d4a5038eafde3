package io.skiffmq.server.http;

import io.skiffmq.server.ClientConnection;
import io.skiffmq.server.authz.Access;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

    ConnectionResources(Lookups lookups) {
        this.lookups = lookups;
    }

    void register(Router router) {
        router.sync("GET", "/api/connections", this::list)
            .sync("GET", "/api/vhosts/{vhost}/connections", this::list)
            .sync("GET", "/api/connections/{name}", r -> ApiResponse.ok(Shapes.connection(find(r, false),
                lookups.node())))
            .sync("DELETE", "/api/connections/{name}", this::close);
    }

    static boolean sees(Caller caller, ClientConnection connection) {
        Access opened = connection.opened();
        return caller.monitoring() || opened != null && opened.user().equals(caller.user());
    }

    private ApiResponse list(ApiRequest request) {
        String vhost = request.variable("vhost");
        if (vhost != null) {
            lookups.vhost(request.caller(), vhost);
        }
        List<Map<String, Object>> items = new ArrayList<>();
        for (ClientConnection connection : lookups.broker().connections()) {
            Access opened = connection.opened();
            if (sees(request.caller(), connection) && (vhost == null || opened != null && opened.vhost().equals(vhost))) {
                items.add(Shapes.connection(connection, lookups.node()));
            }
        }
        return Paging.list(items, request.query());
    }

    private ClientConnection find(ApiRequest request, boolean toClose) {
        String name = request.variable("name");
        for (ClientConnection connection : lookups.broker().connections()) {
            if (Shapes.connectionName(connection).equals(name)) {
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
        ClientConnection connection = find(request, true);
        String reason = request.header("x-reason");
        connection.closeForced(reason == null || reason.isEmpty() ? DEFAULT_REASON : reason);
        return ApiResponse.noContent();
    }
}
