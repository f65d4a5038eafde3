package io.skiffmq.core.queue;

/**
 * The confirm of a publish another node forwarded to a replicated queue led here, with the number that node gave it
 * (docs/quorum-queues.md, "Publishes between two leaders are held"): the forwarding node's {@code enqueuer} id and
 * its {@code number} for the queue, and whether it is sent again after the link to a leader failed with its outcome
 * unknown. The queue's log keeps the numbers it has taken, so that it drops a resent message it already has, as
 * RabbitMQ's {@code rabbit_fifo} drops an enqueue whose publisher sequence number it has seen. Immutable.
 */
public final class ForwardedConfirm implements PublishConfirm {
    private final PublishConfirm confirm;
    private final long enqueuer;
    private final long number;
    private final boolean resent;

    /** @param confirm what to tell; null when nobody waits */
    public ForwardedConfirm(PublishConfirm confirm, long enqueuer, long number, boolean resent) {
        this.confirm = confirm;
        this.enqueuer = enqueuer;
        this.number = number;
        this.resent = resent;
    }

    public long enqueuer() {
        return enqueuer;
    }

    public long number() {
        return number;
    }

    public boolean resent() {
        return resent;
    }

    @Override
    public void run() {
        if (confirm != null) {
            confirm.run();
        }
    }

    @Override
    public void refused() {
        if (confirm != null) {
            confirm.refused();
        }
    }

    @Override
    public void unavailable(String queue) {
        if (confirm != null) {
            confirm.unavailable(queue);
        }
    }
}
