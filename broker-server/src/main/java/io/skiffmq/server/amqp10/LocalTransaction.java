package io.skiffmq.server.amqp10;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.tx.Transaction;
import java.util.function.Consumer;
import org.apache.qpid.proton.amqp.Binary;

/**
 * One AMQP 1.0 transaction [4]: its txn-id, the coordinator link that declared it, and its work in the core's
 * {@link Transaction}: the transfers it holds until the discharge, and its consumers' dispositions
 * ({@link Settlement}s, one tag range of one link each).
 *
 * <p>A commit publishes the held messages through a {@link Publisher} of its own (tags 0, 1, 2, …), so several
 * transactions of a session commit side by side without sharing confirms. Once every message is confirmed (durable
 * ones synced), the held dispositions are applied and the commit is done; when a queue refused a message, they are
 * undone instead (the deliveries go back to their queues, their delivery-count raised) and the commit fails with
 * the queue's reason. A rollback drops the held messages and undoes the dispositions the same way.
 *
 * <p>Owned by the connection's event loop; the publisher's confirms reach it there.
 */
final class LocalTransaction implements Publisher.Confirms {
    /** A consumer's disposition of deliveries {@code firstTag..lastTag} of one link, held until the discharge. */
    record Settlement(UnsettledDeliveries.Settler link, long firstTag, long lastTag, Outcome outcome) {
        void apply() {
            link.settle(firstTag, lastTag, outcome);
        }

        /** Back to the queue as released, the delivery-count raised, so the next consumer sees a redelivery. */
        void undo() {
            link.settle(firstTag, lastTag, Outcome.MODIFIED_FAILED);
        }
    }

    private final Binary id;
    private final CoordinatorLink coordinator;
    private final Transaction<Settlement> work = new Transaction<>();
    /** Why a commit must fail (a transfer of this transaction was refused); null while it may succeed. */
    private String rollbackOnly;
    /** Told the commit's result (null: committed; else why it rolled back) once every confirm is in. */
    private Consumer<String> committed;
    private Publisher publisher;

    LocalTransaction(Binary id, CoordinatorLink coordinator) {
        this.id = id;
        this.coordinator = coordinator;
    }

    Binary id() {
        return id;
    }

    CoordinatorLink coordinator() {
        return coordinator;
    }

    Transaction<Settlement> work() {
        return work;
    }

    /** A transfer of this transaction was refused: its commit can only fail, with {@code reason}. */
    void rollbackOnly(String reason) {
        if (rollbackOnly == null) {
            rollbackOnly = reason;
        }
    }

    String rollbackOnlyReason() {
        return rollbackOnly;
    }

    /** True between the commit's start and its result. */
    boolean committing() {
        return committed != null;
    }

    /**
     * Publishes the held messages and, once all are confirmed, applies the held dispositions (or undoes them when a
     * queue refused a message) and tells {@code result}: null when committed, else the reason it rolled back.
     */
    void commit(Publisher publisher, Consumer<String> result) {
        this.publisher = publisher;
        this.committed = result;
        work.publishAll(this::publish);
        finishWhenPublished();
    }

    private boolean publish(Message message, boolean mayGoNowhere, long tag) {
        try {
            return publisher.publish(message, tag) == Publisher.Routed.ROUTED;
        } catch (BrokerException | IllegalArgumentException e) {
            // its exchange went between the check and now; the message is released by the publisher
            work.failed(e.getMessage());
            return false;
        }
    }

    private void finishWhenPublished() {
        if (committed == null || !work.published()) {
            return;
        }
        String refusal = work.refusal();
        if (refusal == null) {
            work.settleAll(Settlement::apply);
        } else {
            work.rollbackSettlements(Settlement::undo);
        }
        work.commitDone();
        publisher.close();
        Consumer<String> result = committed;
        committed = null;
        result.accept(refusal);
    }

    /** Drops the held messages (each released once) and gives the held deliveries back to their queues. */
    void rollback() {
        work.rollback(Settlement::undo);
    }

    @Override
    public void confirmed(long firstTag, long lastTag) {
        work.confirmed(firstTag, lastTag);
    }

    @Override
    public void rejected(long firstTag, long lastTag) {
        work.refused(firstTag, lastTag, "a queue refused a message of the transaction (its length limit with"
            + " x-overflow reject-publish, or a failed log)");
    }

    @Override
    public void batchEnd() {
        finishWhenPublished();
    }
}
