package io.skiffmq.core.tx;

import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.function.Consumer;

/**
 * One local transaction's held work, the same for AMQP 0-9-1's {@code tx.*} and AMQP 1.0's coordinator: published
 * messages are held (one reference each) and routed only at the commit; settlements of deliveries (the protocol's
 * {@code S}: a 0-9-1 ack, an AMQP 1.0 disposition range) are held and applied at the commit, or undone at the
 * rollback.
 *
 * <p>A commit publishes the held messages first ({@link #publishAll}), each with a tag of this transaction's
 * (0, 1, 2, …); the protocol's {@code Publisher} reports their confirms back ({@link #confirmed}, {@link #refused})
 * and the commit is over when every one is in ({@link #published}): durable messages are then synced. When its
 * settlements are applied is the protocol's choice: 0-9-1 applies them at once, as RabbitMQ does; AMQP 1.0 once the
 * publishes are confirmed, so a refused publish can still give the deliveries back ({@link #rollbackSettlements}).
 *
 * <p>Owned by one thread (the connection's event loop); not thread-safe.
 *
 * @param <S> what the protocol holds for one settlement
 */
public final class Transaction<S> {
    /** Publishes one held message. */
    public interface Publish {
        /**
         * @param message one reference, which the callee takes over whatever happens
         * @param flag what the protocol said with the message when it was held (0-9-1: mandatory)
         * @param tag this transaction's number for it, reported back in {@link #confirmed}/{@link #refused}
         * @return true when a confirm (or refusal) will come for it; false when it went nowhere
         */
        boolean publish(Message message, boolean flag, long tag);
    }

    /** Looks at one held message before a commit publishes any. */
    public interface Check {
        /** Why the commit cannot publish {@code message}; null when it can. */
        String problem(Message message, boolean flag);
    }

    private final List<Message> messages = new ArrayList<>();
    private final BitSet flags = new BitSet();
    private final List<S> settlements = new ArrayList<>();
    private long heldBytes;
    /** Confirms the commit in progress still waits for; -1 while no commit is in progress. */
    private long awaiting = -1;
    private long nextTag;
    /** Why a queue refused a message of the commit; null while none did. */
    private String refusal;

    /** Holds a published message until the commit. Takes over one reference. */
    public void publish(Message message, boolean flag) {
        if (awaiting >= 0) {
            message.release();
            throw new IllegalStateException("a commit is in progress");
        }
        flags.set(messages.size(), flag);
        messages.add(message);
        heldBytes += message.size();
    }

    /** Holds a settlement until the commit. */
    public void settle(S settlement) {
        settlements.add(settlement);
    }

    /** Messages held for the commit. */
    public int heldMessages() {
        return messages.size();
    }

    /** Bytes of the messages held for the commit. */
    public long heldBytes() {
        return heldBytes;
    }

    /** Settlements held for the commit. */
    public int heldSettlements() {
        return settlements.size();
    }

    /** The first problem {@code check} finds with the held messages, in the order they came; null when none. */
    public String check(Check check) {
        for (int i = 0; i < messages.size(); i++) {
            String problem = check.problem(messages.get(i), flags.get(i));
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    /** The first problem {@code check} finds with the held settlements, in the order they came; null when none. */
    public String checkSettlements(java.util.function.Function<S, String> check) {
        for (S settlement : settlements) {
            String problem = check.apply(settlement);
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    /**
     * Publishes the held messages, in the order they came. A message handed to {@code publish} is its, whatever
     * happens, so an exception half way leaves only the rest to {@link #rollback}.
     */
    public void publishAll(Publish publish) {
        awaiting = 0;
        refusal = null;
        for (int i = 0; i < messages.size(); i++) {
            Message message = messages.set(i, null);
            heldBytes -= message.size();
            if (publish.publish(message, flags.get(i), nextTag++)) {
                awaiting++;
            }
        }
        messages.clear();
        flags.clear();
        heldBytes = 0;
    }

    /** The messages with tags {@code first..last} are confirmed. */
    public void confirmed(long first, long last) {
        if (awaiting > 0) {
            awaiting -= last - first + 1;
        }
    }

    /** A queue refused the messages with tags {@code first..last}: the commit is over for them, and failed. */
    public void refused(long first, long last, String reason) {
        failed(reason);
        confirmed(first, last);
    }

    /** A message of the commit could not be published at all: the commit failed, with {@code reason}. */
    public void failed(String reason) {
        if (refusal == null) {
            refusal = reason;
        }
    }

    /** True once a commit's messages are all confirmed (or refused). */
    public boolean published() {
        return awaiting == 0;
    }

    /** True between {@link #publishAll} and {@link #commitDone}. */
    public boolean committing() {
        return awaiting >= 0;
    }

    /** Why a queue refused a message of the commit just published; null when none did. */
    public String refusal() {
        return refusal;
    }

    /** Applies the held settlements, in the order they came, and forgets them. */
    public void settleAll(Consumer<S> apply) {
        for (int i = 0; i < settlements.size(); i++) {
            apply.accept(settlements.set(i, null));
        }
        settlements.clear();
    }

    /** Undoes the held settlements, in the order they came, and forgets them. */
    public void rollbackSettlements(Consumer<S> undo) {
        settleAll(undo);
    }

    /** The commit is answered: the transaction is empty again, ready for more work. */
    public void commitDone() {
        awaiting = -1;
        refusal = null;
    }

    /** Drops the held messages (each released once) and undoes the held settlements. */
    public void rollback(Consumer<S> undo) {
        for (Message message : messages) {
            if (message != null) {
                message.release();
            }
        }
        messages.clear();
        flags.clear();
        heldBytes = 0;
        rollbackSettlements(undo);
    }
}
