package io.skiffmq.server.cluster;

import io.skiffmq.cluster.ClusterNode;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * rabbit_quorum_queue's {@code add_member} and {@code delete_member} (docs/quorum-queues.md, "Changing members"):
 * checked here as RabbitMQ 4.0 checks them, then asked of the metadata log, which the queue's group leader carries
 * out ({@link ReplicatedQueues}); completes once the metadata log ends the change. Stateless.
 */
public final class QueueMembership {
    private static final System.Logger LOG = System.getLogger(QueueMembership.class.getName());

    private final ReplicatedQueues queues;
    private final ClusterNode cluster;

    QueueMembership(ReplicatedQueues queues, ClusterNode cluster) {
        this.queues = queues;
        this.cluster = cluster;
    }

    /**
     * A change refused or failed, with rabbit_quorum_queue's reason: {@code node_not_running}, {@code last_node},
     * {@code not_quorum_queue}, {@code classic_queue_not_supported}, {@code cluster_change_not_permitted},
     * {@code timeout}, or our own words for what is not built.
     */
    public static final class Refused extends RuntimeException {
        public Refused(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * Adds a member on {@code node}; nothing to do when it is one already (RabbitMQ's add_member is idempotent).
     *
     * @throws Refused when the change is refused at once
     */
    public CompletableFuture<Void> add(VirtualHost vhost, String queue, String node, Duration timeout) {
        return change(vhost, queue, node, true, timeout);
    }

    /**
     * Removes the member on {@code node}; nothing to do when it is none (idempotent too).
     *
     * @throws Refused when the change is refused at once
     */
    public CompletableFuture<Void> delete(VirtualHost vhost, String queue, String node, Duration timeout) {
        return change(vhost, queue, node, false, timeout);
    }

    /**
     * rabbit_quorum_queue's {@code grow} and {@code shrink_all}: adds a member on {@code node} to, or deletes its
     * member from, each replicated quorum queue of {@code vhosts} whose names match (with {@code evenOnly}, a grow
     * only of those with an even number of members), one queue after another. A queue refused or failed is logged
     * and left, as RabbitMQ's are; completes once each was tried.
     */
    public CompletableFuture<Void> changeAll(List<VirtualHost> vhosts, String node, boolean add,
            java.util.regex.Pattern vhostPattern, java.util.regex.Pattern queuePattern, boolean evenOnly,
            Duration timeout) {
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        for (VirtualHost vhost : vhosts) {
            if (!vhostPattern.matcher(vhost.name()).find()) {
                continue;
            }
            for (QueueHomed record : List.copyOf(vhost.remoteQueues())) {
                List<String> members = members(vhost, record.name());
                if (QueueType.of(record.arguments()) != QueueType.QUORUM || members == null
                        || members.contains(node) == add || !queuePattern.matcher(record.name()).find()
                        || add && evenOnly && members.size() % 2 != 0) {
                    continue;
                }
                String what = "quorum queue '" + record.name() + "' in vhost '" + vhost.name() + "': "
                    + (add ? "adding a member on node " : "removing its member on node ") + node;
                done = done.thenCompose(before -> {
                    LOG.log(System.Logger.Level.INFO, what);
                    try {
                        return change(vhost, record.name(), node, add, timeout).exceptionally(failed -> {
                            LOG.log(System.Logger.Level.WARNING, what + " failed: " + (failed.getCause() != null
                                ? failed.getCause().getMessage() : failed.getMessage()));
                            return null;
                        });
                    } catch (Refused refused) {
                        LOG.log(System.Logger.Level.WARNING, what + " refused: " + refused.getMessage());
                        return CompletableFuture.completedFuture(null);
                    }
                });
            }
        }
        return done;
    }

    /** The members of a replicated quorum queue, or null for any other queue. */
    public List<String> members(VirtualHost vhost, String queue) {
        QueueHomed record = vhost.remoteQueue(queue);
        return record == null ? null : queues.members(vhost.name(), record);
    }

    private CompletableFuture<Void> change(VirtualHost vhost, String queue, String node, boolean add,
            Duration timeout) {
        QueueHomed record = vhost.remoteQueue(queue);
        Queue local = vhost.queue(queue);
        QueueType type = record != null ? QueueType.of(record.arguments()) : local != null ? local.type() : null;
        if (type == QueueType.CLASSIC) {
            throw new Refused("classic_queue_not_supported");
        }
        if (type != QueueType.QUORUM) {
            throw new Refused("not_quorum_queue");
        }
        QueueCommands.Key key = record == null ? null : queues.replicatedKey(vhost.name(), record);
        if (key == null) {
            throw new Refused("quorum queue '" + queue + "' in vhost '" + vhost.name() + "' was declared with one"
                + " member: it is not replicated, and its members cannot change");
        }
        List<String> members = queues.members(vhost.name(), record);
        // the running nodes are asked for: up to two seconds
        if (add && (cluster.members().stream().noneMatch(member -> member.name().equals(node))
                || !cluster.status().running().contains(node))) {
            throw new Refused("node_not_running");
        }
        if (members.contains(node) == add) {
            return CompletableFuture.completedFuture(null);
        }
        if (!add && members.size() == 1) {
            throw new Refused("last_node");
        }
        if (queues.definitions().pendingMove(key) != null) {
            throw new Refused("cluster_change_not_permitted");
        }
        List<String> changed = new ArrayList<>(members);
        if (add) {
            changed.add(node);
        } else {
            changed.remove(node);
        }
        long id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        CompletableFuture<Boolean> ended = queues.queueMoves().whenMoved(id);
        // the preferred leader stays so while it is a member; else the first by name is
        return queues.definitions().askMove(key, id, io.skiffmq.cluster.QueueGroup.ordered(changed, members.get(0)))
            .thenCompose(index -> ended)
            .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
            .handle((done, failure) -> {
                queues.queueMoves().forgetMove(id);
                if (failure != null) {
                    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                    throw new CompletionException(cause instanceof TimeoutException
                        || cause instanceof io.skiffmq.cluster.NoMajorityException ? new Refused("timeout") : cause);
                }
                if (!done) {
                    throw new CompletionException(new Refused("timeout")); // abandoned: the new members never had it
                }
                return null;
            });
    }
}
