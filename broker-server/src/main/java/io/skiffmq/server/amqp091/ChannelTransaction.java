package io.skiffmq.server.amqp091;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A channel's transaction ({@code tx.select}): publishes and acks are held until {@code tx.commit}, which
 * publishes the messages (counting the routed ones, whose confirms the commit waits for) and then settles the acks,
 * or {@code tx.rollback}, which drops them. Acks are checked when they arrive (an unknown tag closes the channel
 * then) and applied at the commit; the deliveries stay unacked until then, and after a rollback. Owned by the
 * connection's event loop.
 */
final class ChannelTransaction {
    /** Publishes one held message; true when a confirm will come for it. */
    interface Publish {
        boolean publish(Message message, boolean mandatory);
    }

    record Settle(long tag, boolean multiple, Outcome outcome) {
    }

    private final List<Message> messages = new ArrayList<>();
    private final List<Boolean> mandatory = new ArrayList<>();
    private final List<Settle> settles = new ArrayList<>();
    private long nextTag;
    /** Confirms the commit in progress still waits for; -1 when no commit is in progress. */
    private long awaiting = -1;

    void publish(Message message, boolean isMandatory) {
        messages.add(message);
        mandatory.add(isMandatory);
    }

    void settle(long tag, boolean multiple, Outcome outcome) {
        settles.add(new Settle(tag, multiple, outcome));
    }

    /** The publisher tag for the next message the commit publishes. */
    long nextTag() {
        return nextTag++;
    }

    /**
     * Publishes the held messages, then settles the held acks. A message taken from the list is the publisher's
     * whatever happens, so a failure half way leaves only the rest to {@link #rollback}.
     */
    void commit(Publish publish, Consumer<Settle> settle) {
        awaiting = 0;
        for (int i = 0; i < messages.size(); i++) {
            Message message = messages.set(i, null);
            if (publish.publish(message, mandatory.get(i))) {
                awaiting++;
            }
        }
        messages.clear();
        mandatory.clear();
        for (int i = 0; i < settles.size(); i++) {
            settle.accept(settles.set(i, null));
        }
        settles.clear();
    }

    /** Messages {@code first..last} (publisher tags) are confirmed. */
    void confirmed(long first, long last) {
        if (awaiting > 0) {
            awaiting -= last - first + 1;
        }
    }

    /** True once a commit's messages are all confirmed: time for {@code commit-ok}. */
    boolean committed() {
        return awaiting == 0;
    }

    /** {@code commit-ok} went: the channel stays transactional, for the next commit. */
    void commitDone() {
        awaiting = -1;
    }

    /** Drops what is held. */
    void rollback() {
        for (Message message : messages) {
            if (message != null) {
                message.release();
            }
        }
        messages.clear();
        mandatory.clear();
        settles.clear();
    }
}
