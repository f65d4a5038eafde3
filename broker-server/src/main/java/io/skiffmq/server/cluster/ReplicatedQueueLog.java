package io.skiffmq.server.cluster;

import io.skiffmq.cluster.NoMajorityException;
import io.skiffmq.cluster.QueueGroup;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.ForwardedConfirm;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.server.peer.PeerLinks;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The {@link QueueLog} of a replicated quorum queue's live queue, on the node leading its group: what a single
 * node's quorum queue journals, appended to the group's log as commands instead ({@link QueueCommands}), under the
 * epoch the queue went live in, the commands of one turn of the queue's thread as one entry. A publish is durable
 * (confirmed) once the entry with its enqueue is committed by a majority, and refused as unavailable when it is not
 * (no majority within the append timeout, or the queue no longer live here); the rest is appended without waiting.
 * A message goes out to consumers once its enqueue is committed ({@link #deliversCommitted}).
 *
 * <p>A publish made on this node is numbered as this node numbers what it forwards ({@link PeerLinks.Unsent}) and
 * kept until its entry is committed: when this node's leadership ends first, it goes, with its number, to the
 * queue's hold for the next leader, which drops it if its log has it, as RabbitMQ's channel resends its pending
 * commands to a new leader. The publisher sees no nack ({@link #deposed}).
 * What the queue was built from is only an index: each of those messages is read from this node's replica when it is
 * delivered ({@link #read}), as a classic queue reads its journal. A message published to the live queue stays in
 * its memory ({@link #isWritten} is never true).
 *
 * <p>Called on the queue's thread, as every {@link QueueLog}, which owns the batch and the publishes not yet
 * answered; {@link #retire}, {@link #deposed} and {@link #leads} come from the replicated queues' thread, through
 * volatile flags, and {@link #deposed}'s hand-over runs on the queue's thread.
 */
final class ReplicatedQueueLog implements QueueLog {
    private static final System.Logger LOG = System.getLogger(ReplicatedQueueLog.class.getName());

    private final QueueGroup group;
    private final QueueCommands.Key key;
    private final long epoch;
    private final QueueExecutor executor;
    /** The commands of this turn, appended as one entry once it ends ({@link #flush}). */
    private final List<byte[]> pending = new ArrayList<>();
    /** Completes once {@link #pending} is committed; null while nothing is pending. */
    private CompletableFuture<Void> batch;
    /** The last batch appended: {@link #whenWritten} waits for it. */
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    /** The sequence of the last message enqueued in {@link #pending}; -1 when none is. */
    private long pendingThrough = -1;
    /** Told, on the queue's thread, through which sequence the enqueues are committed; null until asked. */
    private java.util.function.LongConsumer committed;
    /** The queue is no longer live here (another leader, or its record deleted): it writes nothing more. */
    private volatile boolean retired;
    private volatile boolean failureLogged;
    /** The numbers taken from forwarding nodes, appended or committed: a resend of one is dropped. */
    private final Enqueuers enqueuers;

    /** Where a publish that reaches this log once it is retired goes: the queue's hold for its next leader. */
    private final Queue unled;
    /** How this node numbers its publishes to the queue, and its hold; null to number none. */
    private final PeerLinks.Unsent numbering;
    /** This node's replica of the queue, which the live queue's index was built from; null when it had none. */
    private final QueueReplica replica;
    /** The exchanges and routing keys of the messages read from {@link #replica}. */
    private final QueueCommands.Names exchanges = new QueueCommands.Names();
    private final QueueCommands.Names routingKeys = new QueueCommands.Names();

    /** A publish made on this node, appended under {@code number} in {@code batch} and not yet answered. */
    private record Local(Message message, Runnable durable, long number, CompletableFuture<Void> batch) {
    }

    /** The publishes made here not yet answered, in publishing order. */
    private final ArrayDeque<Local> locals = new ArrayDeque<>();
    /** This turn's batch has a publish made here: its outcome answers {@link #locals}. */
    private boolean batchHasLocals;
    /** This node's leadership of the queue ended: what is published here goes to the next leader. */
    private volatile boolean deposed;
    /** An append failed because this node's leadership ended, which the queue's live queue may not know yet. */
    private volatile boolean leadershipLost;

    /**
     * @param enqueuers the replica's, as of the entry this queue went live at; this log's own from then on
     * @param unled the queue's hold ({@link PublishHolds#unled}); null to refuse such publishes
     * @param numbering the queue's numbering here ({@link PublishHolds#unsent}); null with {@code unled}
     * @param replica what the live queue's index is read from ({@link QueueReplica#restore}); null for none
     */
    ReplicatedQueueLog(QueueGroup group, QueueCommands.Key key, long epoch, QueueExecutor executor,
            Enqueuers enqueuers, Queue unled, PeerLinks.Unsent numbering, QueueReplica replica) {
        this.group = group;
        this.key = key;
        this.epoch = epoch;
        this.executor = executor;
        this.enqueuers = enqueuers;
        this.unled = unled;
        this.numbering = numbering;
        this.replica = replica;
    }

    /** The queue is no longer live here (deleted, or the broker stops): nothing more is written. */
    void retire() {
        retired = true;
    }

    /**
     * This node's leadership of the queue ended: retired, and what was published here and not yet answered goes to
     * the queue's hold, ahead of anything published after, on the queue's thread; completes once it has.
     */
    CompletableFuture<Void> deposed() {
        deposed = true;
        leadershipLost = true;
        retired = true;
        CompletableFuture<Void> held = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                holdLocals();
                held.complete(null);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            held.completeExceptionally(e); // the node stops: its holds refuse what they have anyway
        }
        return held;
    }

    /**
     * False once an append failed because this node's leadership ended: the queue's hold must not hand what it holds
     * back to this live queue, which would refuse a resend of what it appended, but wait for the next leader's.
     */
    boolean leads() {
        return !leadershipLost;
    }

    /** Adds a command to this turn's batch; completes once the batch is committed (never, once retired). */
    private CompletableFuture<Void> append(byte[] command) {
        if (retired) {
            return CompletableFuture.failedFuture(notLed());
        }
        pending.add(command);
        if (batch == null) {
            CompletableFuture<Void> mine = new CompletableFuture<>();
            batch = mine;
            executor.afterTurn(this::flush);
            return mine;
        }
        return batch;
    }

    /** At the end of the queue's turn: this turn's commands, one entry. */
    private void flush() {
        CompletableFuture<Void> done = batch;
        batch = null;
        if (done == null || pending.isEmpty() || retired) {
            pending.clear();
            if (done != null) {
                done.completeExceptionally(notLed()); // retired during the turn: never appended
            }
            return;
        }
        byte[] entry = QueueCommands.batch(pending);
        pending.clear();
        long through = pendingThrough;
        pendingThrough = -1;
        boolean answers = batchHasLocals;
        batchHasLocals = false;
        group.append(epoch, entry).whenComplete((ok, failure) -> {
            if (failure == null) {
                done.complete(null); // before the task below, which reads it
                if (through >= 0 && committed != null || answers) {
                    executor.execute(() -> {
                        if (through >= 0 && committed != null) {
                            committed.accept(through);
                        }
                        answerLocals();
                    });
                }
                return;
            }
            if (!failureLogged) {
                failureLogged = true;
                LOG.log(System.Logger.Level.WARNING, "replicated queue ''{0}'' in vhost ''{1}'': {2}", key.name(),
                    key.vhost(), failure.getMessage());
            }
            done.completeExceptionally(failure);
            if (answers) {
                executor.execute(this::answerLocals);
            }
        });
        last = done;
    }

    /** Why a command of a retired log is not durable: the queue is no longer live here. */
    private NoMajorityException notLed() {
        return new NoMajorityException("replicated queue '" + key.name() + "' in vhost '" + key.vhost()
            + "' is no longer led here (epoch " + epoch + ")", null, deposed);
    }

    /**
     * On the queue's thread: answers the publishes made here whose entries are decided, in order: committed ones
     * are confirmed; those of a leader deposed first go to the hold, with every one after them; those that timed
     * out without a majority are refused as unavailable.
     */
    private void answerLocals() {
        Local next;
        while ((next = locals.peek()) != null && next.batch.isDone()) {
            NoMajorityException failure = failure(next.batch);
            if (failure != null && failure.deposed()) {
                leadershipLost = true;
                holdLocals();
                return;
            }
            locals.poll();
            next.message.release();
            if (failure == null) {
                if (next.durable != null) {
                    next.durable.run();
                }
            } else if (next.durable instanceof PublishConfirm confirm) {
                confirm.unavailable(key.name());
            }
        }
    }

    /** Why {@code batch}, done, failed; null when it was committed. */
    private static NoMajorityException failure(CompletableFuture<Void> batch) {
        try {
            batch.getNow(null);
            return null;
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause() instanceof NoMajorityException noMajority ? noMajority
                : new NoMajorityException(String.valueOf(e.getCause()), e.getCause());
        } catch (java.util.concurrent.CancellationException e) {
            return new NoMajorityException("cancelled", e);
        }
    }

    /**
     * On the queue's thread: what was published here and not yet answered goes to the queue's hold for the next
     * leader, in order, with the numbers it was appended under; refused as unavailable when the hold is full.
     */
    private void holdLocals() {
        Local next;
        while ((next = locals.poll()) != null) {
            PublishConfirm confirm = next.durable instanceof PublishConfirm c ? c : null;
            if (!numbering.take(next.message, confirm, null, next.number)) {
                next.message.release();
                if (confirm != null) {
                    confirm.unavailable(key.name());
                }
            }
        }
    }

    @Override
    public long publish(long sequence, Message message, long deliveryCount, long expiresAt, Runnable durable) {
        return publish(sequence, message, deliveryCount, deliveryCount, expiresAt, durable);
    }

    @Override
    public long publish(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
            Runnable durable) {
        if (retired && unled != null && !(durable instanceof ForwardedConfirm)) {
            // a publish here reached the queue after it stopped being live here (routed before the change): never
            // appended, so held for the next leader as any publish between two leaders, not refused at once, behind
            // those published before it
            if (deposed) {
                holdLocals();
            }
            unled.publish(message.retain(), durable instanceof PublishConfirm confirm ? confirm : null);
            return sequence;
        }
        byte[] command;
        long number = -1;
        if (durable instanceof ForwardedConfirm forwarded && !retired) {
            enqueuers.took(forwarded.enqueuer(), forwarded.number());
            command = QueueCommands.enqueue(key, sequence, deliveryCount, returns, expiresAt, message,
                forwarded.enqueuer(), forwarded.number());
        } else if (numbering != null && !retired) {
            number = numbering.nextNumber();
            enqueuers.took(numbering.enqueuer(), number);
            command = QueueCommands.enqueue(key, sequence, deliveryCount, returns, expiresAt, message,
                numbering.enqueuer(), number);
        } else {
            command = QueueCommands.enqueue(key, sequence, deliveryCount, returns, expiresAt, message);
        }
        if (number >= 0) {
            batchHasLocals = true; // before the batch is flushed, which an executor without turns does at once
        }
        CompletableFuture<Void> appended = append(command);
        pendingThrough = sequence;
        if (number >= 0) {
            locals.add(new Local(message.retain(), durable, number, appended));
        } else if (durable != null) {
            // not committed (no majority in time, a deposed leader, the queue retired here): refused as
            // unavailable, so that no publisher waits for ever; another node resends what it forwarded
            // (PeerConnection); one made here without a hold to number it (no record) may be published again
            appended.whenComplete((done, failure) -> {
                if (failure == null) {
                    durable.run();
                } else if (durable instanceof PublishConfirm confirm) {
                    confirm.unavailable(key.name());
                }
            });
        }
        return sequence;
    }

    @Override
    public long relocate(long sequence, Message message, long deliveryCount, long expiresAt, long location) {
        return location; // the group's log is never cut under a live message
    }

    @Override
    public void requeue(long sequence, long location, long deliveryCount) {
        requeue(sequence, location, deliveryCount, deliveryCount);
    }

    @Override
    public void requeue(long sequence, long location, long deliveryCount, long returns) {
        append(QueueCommands.returned(key, sequence, deliveryCount, returns));
    }

    @Override
    public void deadLettering(long sequence, long location, DeadLetters.Reason reason) {
        append(QueueCommands.deadLettering(key, sequence, reason));
    }

    /**
     * A resent message this queue took already (appended under this epoch, or committed before it): confirmed once
     * the entry that holds it, or a later one, is committed, and refused when that fails; as Raft commits in log
     * order, a later entry committed means the earlier one is.
     */
    @Override
    public boolean duplicate(PublishConfirm confirm) {
        if (!(confirm instanceof ForwardedConfirm forwarded) || !forwarded.resent() || retired
                || !enqueuers.has(forwarded.enqueuer(), forwarded.number())) {
            return false;
        }
        (batch != null ? batch : last).whenComplete((done, failure) -> {
            if (failure == null) {
                forwarded.run();
            } else {
                forwarded.unavailable(key.name());
            }
        });
        return true;
    }

    @Override
    public boolean isWritten(long location) {
        return false;
    }

    /** Yes: {@link #publish} answers a message's sequence as its location, and {@link #read} looks it up by it. */
    @Override
    public boolean locatesBySequence() {
        return true;
    }

    /** Yes: a consumer never gets a message a failover then loses, as with rabbit_fifo (docs/quorum-queues.md). */
    @Override
    public boolean deliversCommitted(java.util.function.LongConsumer committedThrough) {
        this.committed = committedThrough;
        return true;
    }

    @Override
    public Message read(long sequence, long location) {
        Message message;
        try {
            message = replica == null ? null : replica.message(sequence, exchanges, routingKeys);
        } catch (io.skiffmq.core.message.MalformedMessageException e) {
            throw new Unreadable("replicated message " + sequence + " cannot be read: " + e.getMessage(), e);
        }
        if (message == null) {
            String why = "replicated message " + sequence + " of queue '" + key.name() + "' in vhost '" + key.vhost()
                + "' is not in this node's replica";
            if (retired || leadershipLost) {
                // this live queue is going: its replica may have been replaced since; not lost, not read here
                throw new IllegalStateException(why + " (no longer led here)");
            }
            throw new Unreadable(why, null);
        }
        return message;
    }

    @Override
    public void whenWritten(Runnable action) {
        (batch != null ? batch : last).whenComplete((done, failure) -> action.run());
    }

    @Override
    public void remove(long sequence, long location) {
        append(QueueCommands.settle(key, sequence));
    }

    @Override
    public void deleted() {
        append(QueueCommands.delete(key));
    }

    @Override
    public void stopped(long[] deliveredBefore, int count) {
        retired = true; // the broker stops: the replicas keep the queue
    }
}
