package io.skiffmq.core.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * The consumers a queue pushes to, in the order it offers them messages: by priority, highest first (0-9-1's
 * {@code x-priority} consumer argument), round robin among consumers of one priority. A consumer is offered a
 * message only when every consumer of higher priority has no room for it, as in RabbitMQ. With one priority (the
 * usual case) this is plain round robin.
 *
 * <p>Owned by the queue's thread.
 */
final class ConsumerRing {
    /** What offering a message to one consumer came to. */
    interface Offer {
        /** The consumer took nothing (no room, nothing for it): the next one is asked. */
        int NONE = 0;
        /** A message went (or was dropped on the way): the offer is over. */
        int DONE = 1;
        /** Nothing can go now (a message cannot be read yet): dispatching stops. */
        int STOP = 2;

        int offer(QueueConsumer consumer);
    }

    /** Highest priority first; consumers of one priority in the order they came. */
    private final List<QueueConsumer> consumers = new ArrayList<>();
    /** Per run of one priority: where it ends (exclusive), and which of its consumers is asked first next time. */
    private int[] groupEnd = new int[1];
    private int[] groupNext = new int[1];
    private int groups;

    int size() {
        return consumers.size();
    }

    boolean isEmpty() {
        return consumers.isEmpty();
    }

    void add(QueueConsumer consumer) {
        int at = 0;
        while (at < consumers.size() && consumers.get(at).priority >= consumer.priority) {
            at++;
        }
        consumers.add(at, consumer);
        regroup();
    }

    /** The one consumer, when there is exactly one (a single active consumer); else null. */
    QueueConsumer only() {
        return consumers.size() == 1 ? consumers.get(0) : null;
    }

    /** False when it was not here. */
    boolean remove(QueueConsumer consumer) {
        if (!consumers.remove(consumer)) {
            return false;
        }
        regroup();
        return true;
    }

    /** Offers one message, group by group, round robin inside each; returns what the offer came to. */
    int offer(Offer offer) {
        int start = 0;
        for (int g = 0; g < groups; g++) {
            int size = groupEnd[g] - start;
            for (int tried = 0; tried < size; tried++) {
                int index = start + groupNext[g];
                groupNext[g] = (groupNext[g] + 1) % size;
                int result = offer.offer(consumers.get(index));
                if (result != Offer.NONE) {
                    return result;
                }
            }
            start = groupEnd[g];
        }
        return Offer.NONE;
    }

    /** Rebuilds the runs; the round robin restarts within each (rare: consumers come and go). */
    private void regroup() {
        int n = consumers.size();
        if (groupEnd.length < n) {
            groupEnd = new int[n];
            groupNext = new int[n];
        }
        groups = 0;
        for (int i = 0; i < n; i++) {
            if (i + 1 == n || consumers.get(i + 1).priority != consumers.get(i).priority) {
                groupEnd[groups] = i + 1;
                groupNext[groups] = 0;
                groups++;
            }
        }
    }
}
