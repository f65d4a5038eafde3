package io.skiffmq.server.peer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The counts of the queues homed on another node in one virtual host, as last pulled over this node's connection to
 * it ({@link PeerConnection}), for the HTTP API's listings: a listing reads them here and asks no node. A listing
 * that reads them keeps them pulled every {@link #COUNTS_MILLIS} for {@link #COUNTS_IDLE_MILLIS}; then pulling
 * stops until the next listing.
 *
 * <p>The pulls and their state belong to the connection's event loop ({@link #tick} runs there); {@link #read} runs
 * on any thread, and reads the last counts pulled (replaced whole, volatile).
 */
final class HomeCounts {
    static final long COUNTS_MILLIS = 5000;
    static final long COUNTS_IDLE_MILLIS = 60_000;

    /** The home node's counts of its queues, when they were pulled ({@link System#currentTimeMillis}). */
    record Pulled(Map<String, long[]> queues, long pulledAt) {
        /** messages, messages_ready, messages_unacknowledged, consumers of the queue; null when not known. */
        long[] of(String queue) {
            return queues.get(queue);
        }
    }

    private final Executor loop;
    /** Sends {@code GET /queues} to the home node on the loop; null when it cannot be reached now. */
    private final Supplier<CompletableFuture<Object>> request;
    private volatile Pulled last;
    /** When a listing last read the counts ({@link System#nanoTime}); any thread writes it. */
    private volatile long wantedAt = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(COUNTS_IDLE_MILLIS) - 1;
    /** When the last pull was sent, and whether its answer is still to come; owned by the loop. */
    private long pulledAt;
    private boolean pulling;

    HomeCounts(Executor loop, Supplier<CompletableFuture<Object>> request) {
        this.loop = loop;
        this.request = request;
    }

    /** The counts as last pulled, or null until pulled once; asks for a pull when none was asked for lately. */
    Pulled read() {
        long now = System.nanoTime();
        long wanted = wantedAt;
        wantedAt = now;
        if (now - wanted > TimeUnit.MILLISECONDS.toNanos(COUNTS_IDLE_MILLIS)) {
            loop.execute(this::pull); // not pulled lately: now, so the next listing has them
        }
        return last;
    }

    /** On each tick of the connection: pulls again when a listing wants the counts and the last pull is old. */
    void tick() {
        long now = System.nanoTime();
        if (now - wantedAt <= TimeUnit.MILLISECONDS.toNanos(COUNTS_IDLE_MILLIS)
                && now - pulledAt >= TimeUnit.MILLISECONDS.toNanos(COUNTS_MILLIS)) {
            pull();
        }
    }

    private void pull() {
        if (pulling) {
            return;
        }
        CompletableFuture<Object> answer = request.get();
        if (answer == null) {
            return;
        }
        pulling = true;
        pulledAt = System.nanoTime();
        answer.whenComplete((body, failure) -> {
            pulling = false;
            if (failure != null || !(body instanceof List<?> list)) {
                last = null;
                return;
            }
            Map<String, long[]> queues = new HashMap<>(list.size() * 2);
            for (Object item : list) {
                if (item instanceof Map<?, ?> q && q.get("name") instanceof String name) {
                    queues.put(name, new long[] {HomeManagement.number(q, "messages"),
                        HomeManagement.number(q, "messages_ready"),
                        HomeManagement.number(q, "messages_unacknowledged"),
                        HomeManagement.number(q, "consumers")});
                }
            }
            last = new Pulled(queues, System.currentTimeMillis());
        });
    }
}
