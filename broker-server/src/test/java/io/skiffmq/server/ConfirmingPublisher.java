package io.skiffmq.server;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Publishes numbered messages with confirms to one queue on one node until stopped, on a fresh connection again
 * after a failure (a node's link to a killed leader, a refusal, a timeout), and records the numbers confirmed: what a
 * failover test then finds consumed. Runs on a thread of its own; the sets are concurrent.
 */
final class ConfirmingPublisher implements Runnable {
    private static final long WAIT_MILLIS = 60_000;

    final Set<Integer> confirmed = ConcurrentHashMap.newKeySet();
    final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicInteger sent;
    private final Supplier<Connection> connect;
    private final String queue;
    private final IntFunction<byte[]> body;
    private final int window;

    /**
     * @param first the first message's number
     * @param window how many may wait for their confirms before the next is published
     * @param body message {@code n}'s body
     */
    ConfirmingPublisher(Supplier<Connection> connect, String queue, int first, int window, IntFunction<byte[]> body) {
        this.connect = connect;
        this.queue = queue;
        this.sent = new AtomicInteger(first);
        this.window = window;
        this.body = body;
    }

    @Override
    public void run() {
        while (!stop.get()) {
            try (Connection c = connect.get()) {
                Channel channel = c.createChannel();
                ConfirmTracking<Integer> tracking = new ConfirmTracking<>(channel, confirmed);
                while (!stop.get()) {
                    int id = sent.getAndIncrement();
                    tracking.publishing(channel.getNextPublishSeqNo(), id);
                    channel.basicPublish("", queue, null, body.apply(id));
                    if (tracking.outstanding() > window) {
                        channel.waitForConfirms(WAIT_MILLIS);
                    }
                }
                channel.waitForConfirms(WAIT_MILLIS);
            } catch (Exception e) {
                // publish again on a fresh connection
            }
        }
    }

    /**
     * Waits until {@code consumed} holds every confirmed message; fails with the first missing ones and
     * {@code detail} otherwise. Call once stopped.
     */
    void awaitEveryConfirmedIn(Collection<Integer> consumed, java.time.Duration wait, Supplier<String> detail) {
        Set<Integer> all = Set.copyOf(confirmed);
        try {
            org.awaitility.Awaitility.await().atMost(wait).until(() -> consumed.containsAll(all));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            List<Integer> missing = new ArrayList<>(all);
            missing.removeAll(consumed);
            java.util.Collections.sort(missing);
            throw new AssertionError(missing.size() + " confirmed not consumed (of " + all.size() + ", "
                + consumed.size() + " consumed, " + detail.get() + "): "
                + missing.subList(0, Math.min(20, missing.size())));
        }
    }
}
