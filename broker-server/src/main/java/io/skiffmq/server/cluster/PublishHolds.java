package io.skiffmq.server.cluster;

import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.peer.PeerLinks;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The publishes this node holds between two leaders of its replicated queues (docs/quorum-queues.md, "Failover"):
 * one {@link PublishHold} per queue that ever held, made at the first publish that found no leader. {@link #tend}
 * hands each to its queue's leader once one serves it and this node reaches it, and refuses what waited past the
 * append timeout. Thread-safe: a concurrent map of holds, each guarded by itself; {@link #tend} runs on the
 * replicated queues' own thread.
 */
final class PublishHolds {
    /** The bytes of publishes held per queue past which its publishers are held back. */
    private static final long HOLD_BYTES = 64L << 20;

    /** Where a queue's hold goes: its live queue here, or what reaches its leader; null while there is neither. */
    interface Leaders {
        Queue leaderOf(QueueCommands.Key key, String vhost, QueueHomed record);
    }

    /** A queue's hold, with what finds its leader, and the count of publishes sent to it from this node. */
    private record Holding(String vhost, QueueHomed record, PublishHold hold, AtomicLong numbers) {
    }

    /**
     * This node's id as an enqueuer of its replicated queues (docs/quorum-queues.md, "Publishes between two leaders
     * are held"): random, another at each start, so numbers of an earlier start are never taken for its own.
     */
    private final long enqueuer = new java.security.SecureRandom().nextLong();

    private final long timeoutMillis;
    private final int holdCount;
    private final Leaders leaders;
    private final Map<QueueCommands.Key, Holding> holds = new ConcurrentHashMap<>();

    /** @param holdCount the publishes held per queue past which its publishers wait */
    PublishHolds(long timeoutMillis, int holdCount, Leaders leaders) {
        this.timeoutMillis = timeoutMillis;
        this.holdCount = holdCount;
        this.leaders = leaders;
    }

    private Holding holdingOf(QueueCommands.Key key, String vhost, QueueHomed record) {
        return holds.computeIfAbsent(key, k -> new Holding(vhost, record,
            new PublishHold(record.name(), enqueuer, timeoutMillis, holdCount, HOLD_BYTES), new AtomicLong()));
    }

    private PublishHold holdOf(QueueCommands.Key key, String vhost, QueueHomed record) {
        return holdingOf(key, vhost, record).hold();
    }

    /** True while publishes held for the queue's next leader wait: later ones go behind them ({@link #unled}). */
    boolean holding(QueueCommands.Key key) {
        Holding held = holds.get(key);
        return held != null && !held.hold().isEmpty();
    }

    /**
     * What stands here for the queue at its leader's node once its hold was handed there: the same queue, so that
     * its link's settlements are counted where later publishes go; null for none.
     */
    Queue heldTarget(QueueCommands.Key key) {
        Holding held = holds.get(key);
        Queue target = held == null ? null : held.hold().target();
        return PeerLinks.isRemote(target) ? target : null;
    }

    /** What a publish to the replicated queue goes to while nothing here reaches its leader: its hold. */
    Queue unled(QueueCommands.Key key, String vhost, QueueHomed record) {
        return new UnledQueue(record.declaration(), holdOf(key, vhost, record));
    }

    /**
     * How this node numbers its publishes to the queue, and where those go that its link to the leader could not
     * send or lost before their outcome came: its hold.
     */
    PeerLinks.Unsent unsent(QueueCommands.Key key, String vhost, QueueHomed record) {
        Holding holding = holdingOf(key, vhost, record);
        return new PeerLinks.Unsent() {
            @Override
            public boolean take(Message message, PublishConfirm confirm, Runnable released, long number) {
                return holdOf(key, vhost, record).take(message, confirm, released, number);
            }

            @Override
            public long enqueuer() {
                return enqueuer;
            }

            @Override
            public long nextNumber() {
                return holding.numbers().incrementAndGet();
            }
        };
    }

    /** Each hold that has publishes is handed to its queue's leader once one serves it, or refused after the timeout. */
    void tend() {
        for (Map.Entry<QueueCommands.Key, Holding> entry : holds.entrySet()) {
            Holding held = entry.getValue();
            if (held.hold().isEmpty()) {
                continue;
            }
            held.hold().expire(false);
            Queue leader = leaders.leaderOf(entry.getKey(), held.vhost(), held.record());
            if (leader != null && !PeerLinks.unreachable(leader)) {
                PeerLinks.onUnsent(leader, unsent(entry.getKey(), held.vhost(), held.record()));
                held.hold().drain(leader);
            }
        }
    }

    /** This node leads the queue now, {@code made} not yet routable: what was held goes ahead of later publishes. */
    void ledHere(QueueCommands.Key key, Queue made) {
        Holding held = holds.get(key);
        if (held != null) {
            held.hold().drain(made);
        }
    }

    /** The leader of the queue changed: nothing more goes to the old one's queue from its hold. */
    void unserved(QueueCommands.Key key) {
        Holding held = holds.get(key);
        if (held != null) {
            held.hold().unserved();
        }
    }

    /** The queue is gone: what it held is refused. */
    void deleted(QueueCommands.Key key) {
        Holding held = holds.remove(key);
        if (held != null) {
            held.hold().expire(true);
        }
    }

    /** The node stops: everything held is refused. */
    void close() {
        holds.values().forEach(held -> held.hold().expire(true));
    }
}
