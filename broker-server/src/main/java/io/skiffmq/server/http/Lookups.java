package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.Broker;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker lookups the resources share, each with RabbitMQ's answer when it fails: 404 for what does not exist,
 * 401 {@code not_authorised} for a virtual host the caller may not see or an operation its permissions refuse.
 * Stateless apart from the broker; safe from any thread.
 */
final class Lookups {
    private final Broker broker;

    Lookups(Broker broker) {
        this.broker = broker;
    }

    Broker broker() {
        return broker;
    }

    String node() {
        return broker.config().node();
    }

    /** The virtual host of a path, when it exists and the caller may see it. */
    VirtualHost vhost(Caller caller, String name) {
        VirtualHost vhost = broker.vhost(name);
        if (vhost == null || broker.accessControl().vhost(name) == null) {
            throw ApiException.notFound();
        }
        caller.requireVhost(broker.accessControl(), name);
        return vhost;
    }

    /**
     * Before a delete in a cluster answers 404: waits until this node has applied every change committed before
     * ({@link VirtualHost#caughtUp}), so that what another node acknowledged is seen here. Without a majority, 503.
     */
    void caughtUp(VirtualHost vhost) {
        if (!vhost.clustered()) {
            return;
        }
        try {
            vhost.caughtUp("the metadata store operation timed out").join();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** The virtual hosts the caller sees: all for monitoring users, those it has permissions in otherwise. */
    List<VirtualHost> visibleVhosts(Caller caller) {
        List<VirtualHost> visible = new ArrayList<>();
        for (String name : broker.admin().vhosts()) {
            VirtualHost vhost = broker.vhost(name);
            if (vhost != null && caller.sees(broker.accessControl(), name)) {
                visible.add(vhost);
            }
        }
        return visible;
    }

    /** The virtual hosts of a listing: the one in the path when there is one, else all the caller sees. */
    List<VirtualHost> vhosts(ApiRequest request) {
        String name = request.variable("vhost");
        return name == null ? visibleVhosts(request.caller()) : List.of(vhost(request.caller(), name));
    }

    Queue queue(VirtualHost vhost, String name) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            throw ApiException.notFound();
        }
        return queue;
    }

    /** The caller's AMQP permission, as RabbitMQ checks it for the HTTP API's operations. */
    void require(Caller caller, String vhost, Permission permission, Access.Resource resource, String name) {
        String refusal = broker.accessControl().access(caller.user(), vhost).refusal(permission, resource, name);
        if (refusal != null) {
            throw ApiException.notAuthorised(refusal);
        }
    }
}
