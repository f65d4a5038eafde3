package io.skiffmq.server.cluster;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.peer.PeerLinks;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The publishes to one replicated queue that this node holds while no leader serves it (its leader's node gone, the
 * next not yet known), as RabbitMQ's channel keeps its pending commands and sends them to the new leader: kept in
 * order, handed to the leader's queue once one serves it ({@link #drain}), and refused only when none does within
 * the append timeout ({@link #expire}). A message sent to the old leader whose outcome is unknown is held with the
 * number it was sent with, and sent again with it: the next leader drops it when its log has it ({@link Enqueuers}).
 *
 * <p>Bounded: past {@code maxCount} messages or {@code maxBytes} its publishers are held back ({@link #holdPublisher});
 * past twice that, a publish is refused. Each message is released once: by the queue it is handed to, or here when
 * refused. Thread-safe: guarded by itself; a hand-over runs under the lock, so that what is held goes to the leader
 * before any later publish; confirms are answered outside it.
 */
final class PublishHold {
    /** @param number the number it was sent with before, its outcome unknown; -1 when never sent */
    private record Held(Message message, PublishConfirm confirm, Runnable released, long deadline, int bytes,
            long number) {
    }

    private final String queue;
    /** This node's id as an enqueuer of the queue ({@link PeerLinks.Unsent#enqueuer}). */
    private final long enqueuer;
    private final long timeoutNanos;
    private final int maxCount;
    private final long maxBytes;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private final List<Runnable> resumes = new ArrayList<>();
    private long bytes;
    /** The leader's queue the last drain went to, which takes later publishes directly; null between leaders. */
    private Queue target;

    PublishHold(String queue, long enqueuer, long timeoutMillis, int maxCount, long maxBytes) {
        this.queue = queue;
        this.enqueuer = enqueuer;
        this.timeoutNanos = timeoutMillis * 1_000_000L;
        this.maxCount = maxCount;
        this.maxBytes = maxBytes;
    }

    synchronized boolean isEmpty() {
        return held.isEmpty();
    }

    /** The leader's queue the last drain went to, until the leader changes; null for none. */
    synchronized Queue target() {
        return target;
    }

    /** The leader changed: nothing is handed to the old one's queue any more. */
    synchronized void unserved() {
        target = null;
    }

    /**
     * Holds a publish that was not sent (its link to the old leader is down), or sent with {@code number} and its
     * outcome unknown; {@code released} runs once it is answered. False, taking nothing, when the hold is full.
     */
    synchronized boolean take(Message message, PublishConfirm confirm, Runnable released, long number) {
        int size = message.size();
        if (held.size() >= 2 * maxCount || bytes + size > 2 * maxBytes) {
            return false;
        }
        held.add(new Held(message, confirm, released, System.nanoTime() + timeoutNanos, size, number));
        bytes += size;
        target = null; // what comes after this goes behind it
        return true;
    }

    /** A publish routed here ({@link UnledQueue}): to the leader's queue when nothing waits, held otherwise. */
    void publish(Message message, PublishConfirm confirm) {
        synchronized (this) {
            if (held.isEmpty() && target != null) {
                target.publish(message, confirm);
                return;
            }
            if (take(message, confirm, null, -1)) {
                return;
            }
        }
        message.release();
        if (confirm != null) {
            confirm.unavailable(queue);
        }
    }

    /** Hands everything held to {@code leader}'s queue, in order; later publishes go to it directly. */
    void drain(Queue leader) {
        List<Runnable> done = new ArrayList<>();
        synchronized (this) {
            Held next;
            while ((next = held.poll()) != null) {
                if (next.number >= 0) {
                    PeerLinks.resend(leader, next.message, next.confirm, enqueuer, next.number);
                } else {
                    leader.publish(next.message, next.confirm);
                }
                if (next.released != null) {
                    done.add(next.released);
                }
            }
            bytes = 0;
            target = leader;
            done.addAll(resumes);
            resumes.clear();
        }
        done.forEach(Runnable::run);
    }

    /**
     * Refuses, oldest first, what was held longer than the append timeout (no leader served the queue in time), or
     * everything when {@code all} (the queue is gone).
     */
    void expire(boolean all) {
        List<Held> refused = new ArrayList<>();
        List<Runnable> resume = List.of();
        synchronized (this) {
            long now = System.nanoTime();
            while (!held.isEmpty() && (all || held.peek().deadline - now <= 0)) {
                Held gone = held.poll();
                bytes -= gone.bytes;
                refused.add(gone);
            }
            if (all || !refused.isEmpty() && held.size() < maxCount / 2 && bytes < maxBytes / 2) {
                resume = new ArrayList<>(resumes);
                resumes.clear();
            }
        }
        for (Held gone : refused) {
            gone.message.release();
            if (gone.confirm != null) {
                gone.confirm.unavailable(queue);
            }
            if (gone.released != null) {
                gone.released.run();
            }
        }
        resume.forEach(Runnable::run);
    }

    /** Holds a publisher back while the hold is full: {@code resume} runs once it has room. */
    synchronized boolean holdPublisher(Runnable resume) {
        if (held.size() < maxCount && bytes < maxBytes) {
            return false;
        }
        resumes.add(resume);
        return true;
    }
}
