package io.skiffmq.server.cluster;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The moves of this node's replicated queues between queue groups (docs/quorum-queues.md, "Changing members"), as
 * far as this node takes part: the steps the leader of a queue's group takes to carry a move on or to thaw the queue
 * after one ({@link #carryOn}, {@link #thaw}), the move each queue moved in with, and those waiting for a move's end
 * ({@link #whenMoved}). Which group a queue uses, and its live queue, stay {@link ReplicatedQueues}': each step ends
 * by settling the group there again.
 *
 * <p>Thread-safe: concurrent maps and set. A step starts on the replicated queues' thread ({@link
 * ReplicatedQueues#later}) and goes on on the threads completing its appends, transfers and metadata entries;
 * {@link #moving} is touched on any of them. {@link #movedIn} is written on the metadata log's applier thread and
 * read on the replicated queues' thread; a waiter is added on any thread and answered on the metadata log's applier
 * thread.
 */
final class QueueMoves {
    private static final System.Logger LOG = System.getLogger(QueueMoves.class.getName());
    /** How soon a leader tries a move's step again, which failed without a majority. */
    private static final long MOVE_RETRY_MILLIS = 500;
    /** The largest adoption entry: a queue's state is sent in parts of about this size. */
    private static final int ADOPT_BYTES = 1 << 20;

    private final ReplicatedQueues queues;
    /** The queues this node is moving now (carrying on a move or thawing after one), touched on any thread. */
    private final Set<QueueCommands.Key> moving = ConcurrentHashMap.newKeySet();
    /** The move each queue moved in with, for its new group's leader to check its replica against. */
    private final Map<QueueCommands.Key, Long> movedIn = new ConcurrentHashMap<>();
    /** Those waiting here for a move's end ({@link #whenMoved}), by its id. */
    private final Map<Long, CompletableFuture<Boolean>> waiters = new ConcurrentHashMap<>();

    QueueMoves(ReplicatedQueues queues) {
        this.queues = queues;
    }

    /** Under the replicated queues' lock: the queue moved in here with the move {@code id}. */
    void movedIn(QueueCommands.Key key, long id) {
        movedIn.put(key, id);
    }

    /** The queue's record is deleted. */
    void deleted(QueueCommands.Key key) {
        movedIn.remove(key);
    }

    /** A queue moved in: its replica is the one its move ended with (or it was never moved). */
    boolean adoptedAsEnded(QueueCommands.Key key, QueueReplica replica) {
        Long move = movedIn.get(key);
        return move == null || replica == null || replica.adopted() == move || replica.adopted() == 0;
    }

    /**
     * On the replicated queues' thread, this node leading the queue's group: the move the metadata log has under
     * way. Its live queue goes ({@code retiring}, null when there is none here; consumers wait for the new leader's);
     * the group freezes the queue, so that its replicas hold its final state; that state is sent to the new member
     * set's group, which adopts it; then the metadata log ends the move, done (the record's members switch, the new
     * group's leader serves it, this group drops it) or, when the new group did not commit it in time, abandoned
     * (this group thaws it). A step that fails without a majority is tried again while this node leads; every step
     * can be repeated.
     */
    void carryOn(ReplicatedQueues.Group group, QueueCommands.Key key, ReplicatedDefinitions.Move move, long epoch,
            Runnable retiring) {
        if (!moving.add(key)) {
            return;
        }
        if (retiring != null) {
            retiring.run();
        }
        group.handle.append(epoch, QueueCommands.batch(List.of(QueueCommands.freeze(key, move.id()))))
            .whenComplete((frozen, failure) -> {
                QueueReplica replica = group.replicas.get(key);
                if (failure != null || replica == null || replica.frozen() != move.id()) {
                    moved(group, key, true); // no longer leading, or no majority: whoever leads tries again
                    return;
                }
                adopt(key, move, replica.held(), 0).whenComplete((adopted, notAdopted) -> {
                    if (notAdopted != null) {
                        LOG.log(System.Logger.Level.WARNING, "quorum queue ''{0}'' in vhost ''{1}'': its new members"
                            + " {2} did not adopt it: the change is abandoned ({3})", key.name(), key.vhost(),
                            move.members(), notAdopted.getMessage());
                    }
                    queues.definitions().endMove(key, move.id(), notAdopted == null)
                        .whenComplete((index, notEnded) -> moved(group, key, notEnded != null));
                });
            });
    }

    /**
     * The queue's state from entry {@code from} on, sent to the group of the move's members in parts, one after the
     * other (each made when the one before is committed); completes once all are.
     */
    private CompletableFuture<Void> adopt(QueueCommands.Key key, ReplicatedDefinitions.Move move,
            HeldMessages entries, int from) {
        int to = from;
        long bytes = 0;
        while (to < entries.size() && (to == from || bytes + entries.storedLength(to) < ADOPT_BYTES)) {
            bytes += entries.storedLength(to) + 64;
            to++;
        }
        int next = to;
        byte[] part = QueueCommands.batch(List.of(QueueCommands.adopt(key, move.id(), entries, from, to)));
        CompletableFuture<Void> sent = queues.node().transfer(move.members(), part);
        return next >= entries.size() ? sent : sent.thenCompose(done -> adopt(key, move, entries, next));
    }

    /**
     * On the replicated queues' thread, this node leading the queue's group with the queue frozen and no move under
     * way: the move was abandoned, or ended here before this node applied it. Once this node has every committed
     * metadata change, the group thaws the queue if it is still this group's; its live queue is then built here as
     * any other.
     */
    void thaw(ReplicatedQueues.Group group, QueueCommands.Key key, long move, long epoch) {
        if (!moving.add(key)) {
            return;
        }
        ReplicatedDefinitions definitions = queues.definitions();
        definitions.caughtUp().whenComplete((caught, failure) -> queues.later(() -> {
            if (failure != null || definitions.pendingMove(key) != null || !group.queues.contains(key)) {
                moved(group, key, failure != null);
                return;
            }
            group.handle.append(epoch, QueueCommands.batch(List.of(QueueCommands.unfreeze(key, move))))
                .whenComplete((thawed, notThawed) -> moved(group, key, notThawed != null));
        }, 0));
    }

    /** A step of a move is over: the group is settled again, at once or, after a failure, a little later. */
    private void moved(ReplicatedQueues.Group group, QueueCommands.Key key, boolean failed) {
        moving.remove(key);
        queues.later(() -> queues.settle(group), failed ? MOVE_RETRY_MILLIS : 0);
    }

    /** Completes with whether the move {@code id} was done, once the metadata log ends it here. */
    CompletableFuture<Boolean> whenMoved(long id) {
        return waiters.computeIfAbsent(id, i -> new CompletableFuture<>());
    }

    void forgetMove(long id) {
        waiters.remove(id);
    }

    /**
     * On the metadata log's applier thread: the move {@code id} of the queue ended, and whoever waits for it here is
     * answered. Abandoned, with the queue in this node's group {@code thawing}: once the queue is served again there.
     */
    void ended(QueueCommands.Key key, long id, boolean done, ReplicatedQueues.Group thawing) {
        CompletableFuture<Boolean> waiter = waiters.remove(id);
        if (waiter != null && thawing != null) {
            // answered once the queue is served again where it was: until then a client's command finds no queue
            queues.servedAgain(thawing, key).whenComplete((served, notYet) -> waiter.complete(false));
        } else if (waiter != null) {
            waiter.complete(done);
        }
    }
}
