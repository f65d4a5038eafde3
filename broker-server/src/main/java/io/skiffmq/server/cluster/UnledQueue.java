package io.skiffmq.server.cluster;

import io.skiffmq.core.UnreachableQueue;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.QueueDeclaration;

/**
 * What a message routed to a replicated queue goes to on this node while nothing reaches its leader (between two
 * leaders), or while publishes held then are still ahead of it: its {@link PublishHold}, which hands them to the next
 * leader in order. Only routing hands it out; everything but publishing fails as {@link UnreachableQueue}'s does.
 * Stateless but for the hold, which is thread-safe.
 */
final class UnledQueue extends UnreachableQueue {
    private final PublishHold hold;

    UnledQueue(QueueDeclaration declaration, PublishHold hold) {
        super(declaration);
        this.hold = hold;
    }

    @Override
    public void publish(Message message, PublishConfirm confirm) {
        hold.publish(message, confirm);
    }

    @Override
    public boolean holdsPublishers() {
        return true;
    }

    @Override
    public boolean holdPublisher(Runnable resume) {
        return hold.holdPublisher(resume);
    }
}
