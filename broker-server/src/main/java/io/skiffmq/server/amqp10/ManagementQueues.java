package io.skiffmq.server.amqp10;

import static io.skiffmq.server.amqp10.ManagementNode.arguments;
import static io.skiffmq.server.amqp10.ManagementNode.badName;
import static io.skiffmq.server.amqp10.ManagementNode.done;
import static io.skiffmq.server.amqp10.ManagementNode.flag;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.MetadataTimeouts;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.server.amqp10.ManagementNode.Response;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * The queue requests of a {@link ManagementNode}: declare, info, purge and delete of one queue ({@code /queues/q},
 * {@code /queues/q/messages}), and every queue's counts for another node's listings. A queue homed on another node,
 * or a replicated one led there, is answered by that node, asked over the node link. The node routes the requests
 * here by path; the permission checks are its own, asked for here in RabbitMQ's order.
 *
 * <p>Stateless apart from the virtual host, as its node; safe from any thread.
 */
final class ManagementQueues {
    private final ManagementNode management;
    private final VirtualHost vhost;
    private final String node;
    /** The connection the requests come from: the owner of the exclusive queues they declare. */
    private final Object owner;
    private final Executor executor;

    ManagementQueues(ManagementNode management, VirtualHost vhost, String node, Object owner, Executor executor) {
        this.management = management;
        this.vhost = vhost;
        this.node = node;
        this.owner = owner;
        this.executor = executor;
    }

    CompletableFuture<Response> declare(String name, Map<String, Object> body) {
        // as RabbitMQ checks a queue name before anything else
        if (name.isEmpty()) {
            return done(Response.error(400, "declare queue with empty name not allowed"));
        }
        Response refused = badName(name);
        if (refused == null) {
            refused = management.reserved("queue", name);
        }
        if (refused != null) {
            return done(refused);
        }
        management.require(Permission.CONFIGURE, Access.Resource.QUEUE, name);
        // the arguments are checked by the virtual host, as for every protocol
        Map<String, Object> arguments = arguments(body);
        boolean existed = vhost.queue(name) != null || vhost.remoteQueue(name) != null;
        if (!existed && arguments.get("x-dead-letter-exchange") instanceof String dlx) {
            // as RabbitMQ checks a new queue's dead-letter exchange: read on the queue, write on the exchange
            management.require(Permission.READ, Access.Resource.QUEUE, name);
            management.require(Permission.WRITE, Access.Resource.EXCHANGE, dlx);
        }
        QueueDeclaration wanted = vhost.withDefaultType(new QueueDeclaration(name, flag(body, "durable", true),
            flag(body, "exclusive", false), flag(body, "auto_delete", false), arguments));
        io.skiffmq.core.definitions.DefinitionChange.QueueHomed remote =
            vhost.queue(name) == null ? vhost.remoteQueue(name) : null;
        if (remote == null) {
            vhost.declareQueue(wanted, owner);
        } else if (!remote.declaration().equivalent(wanted)) {
            // declared again from a node that is not its home: checked against its record, as over 0-9-1
            throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "queue '" + name + "' exists as "
                + remote.declaration().describe());
        }
        return info(name).thenApply(info -> Response.of(existed ? 200 : 201, info.body()));
    }

    private Queue existingQueue(String name) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            throw new BrokerException(BrokerException.Kind.NOT_FOUND, "no queue '" + name + "'");
        }
        return queue;
    }

    /**
     * A queue's info, as {@code rabbit_amqp_management} gives it; of a queue served by another node (homed there, or
     * a replicated queue it leads), with the counts that node holds, asked there.
     */
    CompletableFuture<Response> info(String name) {
        return queueInfo(name, false);
    }

    /** @param waited whether this node {@link #settled} the queue already */
    private CompletableFuture<Response> queueInfo(String name, boolean waited) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            queue = vhost.remoteQueueProxy(name);
            if (queue == null) {
                if (!waited && vhost.clustered()) {
                    return settled(name).thenComposeAsync(done -> queueInfo(name, true), executor);
                }
                existingQueue(name); // 404
            }
            Queue remote = queue;
            return remote.counts().thenApply(counts -> queueInfo(name, remote, counts.ready(), counts.consumers()));
        }
        return done(queueInfo(name, queue, queue.readyCount(), queue.consumerCount()));
    }

    /** @param waited whether this node {@link #settled} the queue already */
    CompletableFuture<Response> purge(String name, boolean waited) {
        Queue remote = vhost.queue(name) == null ? vhost.remoteQueueProxy(name) : null;
        if (remote != null) {
            return remote.purge().thenApply(n -> count(200, n)); // by its home node (docs/cluster.md)
        }
        if (!waited && vhost.queue(name) == null && vhost.clustered()) {
            return settled(name).thenComposeAsync(done -> purge(name, true), executor);
        }
        Queue queue = existingQueue(name);
        vhost.checkAccess(queue, owner);
        if (queue.type() == io.skiffmq.core.queue.QueueType.STREAM) {
            // rabbit_amqp_management's words for a queue type that cannot be purged
            return done(Response.error(400, "purge not supported by queue '" + queue.name() + "' in vhost '"
                + vhost.name() + "'"));
        }
        return queue.purge().thenApply(n -> count(200, n));
    }

    /**
     * In a cluster, before a queue that neither lives nor has a stand-in here is taken for missing: this node first
     * applies what the cluster committed, when it has no record of the queue (another node that just declared it
     * asks here, at its leader's or home node, for its counts, and may be ahead of this node's metadata log); then,
     * for a replicated quorum queue, waits for a leader serving it (it is between two leaders, or just declared and
     * not live at its leader yet, whose own {@code /management} is then asked).
     */
    private CompletableFuture<Void> settled(String name) {
        CompletableFuture<Void> caughtUp = vhost.remoteQueue(name) != null ? CompletableFuture.completedFuture(null)
            : vhost.caughtUp("timed out reading queue '" + name + "' in vhost '" + vhost.name()
                + "' from the metadata store");
        return caughtUp.thenComposeAsync(done -> vhost.led(name, "timed out waiting for a leader of quorum queue '"
            + name + "' in vhost '" + vhost.name() + "'"), executor);
    }

    private Response queueInfo(String name, Queue queue, int ready, int consumers) {
        List<String> nodes = vhost.queueNodes(name);
        if (nodes == null || nodes.isEmpty()) {
            nodes = List.of(node);
        }
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("name", name);
        info.put("durable", queue.durable());
        info.put("auto_delete", queue.declaration().autoDelete());
        info.put("exclusive", queue.declaration().exclusive());
        info.put("type", queue.type().alias());
        info.put("arguments", queue.arguments());
        info.put("leader", nodes.get(0));
        info.put("replicas", nodes.toArray(String[]::new));
        info.put("message_count", UnsignedLong.valueOf(ready));
        info.put("consumer_count", UnsignedInteger.valueOf(consumers));
        return Response.of(200, info);
    }

    /**
     * The counts of every queue homed on this node in the virtual host, for another node's HTTP listings (not
     * RabbitMQ's: its nodes read each other's queue metrics over Erlang distribution). Read off the queues' threads,
     * approximate as a listing's are.
     */
    List<Map<String, Object>> counts() {
        List<Map<String, Object>> counts = new ArrayList<>();
        for (Queue queue : vhost.queues()) {
            int ready = queue.readyCount();
            int unacked = queue.unackedCount();
            counts.add(Map.of("name", queue.name(), "messages", UnsignedLong.valueOf(ready + unacked),
                "messages_ready", UnsignedLong.valueOf(ready), "messages_unacknowledged", UnsignedLong.valueOf(unacked),
                "consumers", UnsignedInteger.valueOf(queue.consumerCount())));
        }
        return counts;
    }

    /** @param caughtUp whether this node has applied what the cluster committed when the delete arrived */
    CompletableFuture<Response> delete(String name, boolean caughtUp) {
        Response bad = badName(name);
        if (bad != null) {
            return done(bad);
        }
        management.require(Permission.CONFIGURE, Access.Resource.QUEUE, name);
        Queue queue = vhost.queue(name);
        if (queue == null) {
            CompletableFuture<Integer> remote = vhost.deleteRemoteQueue(name); // by its home node, with its messages
            if (remote != null) {
                return remote.thenApply(n -> count(200, n));
            }
            if (!caughtUp && vhost.clustered()) {
                // declared on another node and not applied here yet? Look again once it would be
                return vhost.caughtUp(MetadataTimeouts.QUEUE_DELETE)
                    .thenComposeAsync(done -> delete(name, true), executor);
            }
            // RabbitMQ answers a delete of a missing queue with 200 and no messages
            return done(count(200, 0));
        }
        vhost.checkAccess(queue, owner);
        CompletableFuture<Integer> deleted = vhost.deleteQueue(queue);
        return deleted == null ? done(count(200, 0)) : deleted.thenApply(n -> count(200, n));
    }

    private static Response count(int status, int messages) {
        return Response.of(status, Map.of("message_count", UnsignedLong.valueOf(messages)));
    }

    // ---- exchanges ----------------------------------------------------------------------------------------
}
