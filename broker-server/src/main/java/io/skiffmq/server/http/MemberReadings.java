package io.skiffmq.server.http;

import io.skiffmq.server.cluster.ClusterMembership;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import tools.jackson.databind.ObjectMapper;

/**
 * The other members' readings for {@code /api/nodes} (memory, disk, file descriptors, sockets, threads, uptime):
 * each member answers with its own node entry, as its {@code /api/nodes} shows it, asked directly over the cluster
 * transport ({@link ClusterMembership#readingsOf}), never through the metadata log. An answer is kept
 * {@value #FRESH_MILLIS} ms (RabbitMQ's default statistics interval): listings within that reuse it, and a member
 * that did not answer is shown without readings.
 *
 * <p>Thread-safe: the cache is a concurrent map of immutable entries; a listing may ask a member twice at once.
 */
final class MemberReadings {
    /** How long a member's answer is shown before it is asked again. */
    static final long FRESH_MILLIS = 5000;

    private record Reading(long atNanos, Map<String, Object> node) {
    }

    private final ClusterMembership cluster;
    private final ObjectMapper mapper;
    private final Map<String, Reading> cache = new ConcurrentHashMap<>();

    /** Answers the other members with {@code own}, this node's entry. */
    MemberReadings(ClusterMembership cluster, ObjectMapper mapper, Supplier<Map<String, Object>> own) {
        this.cluster = cluster;
        this.mapper = mapper;
        cluster.answerReadings(() -> mapper.writeValueAsBytes(own.get()));
    }

    /**
     * The entries of {@code members}, asked in parallel where the cached one is stale: each its own answer, or
     * {@code fallback}'s entry (name, type, running) when it gave none.
     */
    List<Map<String, Object>> of(List<String> members, Function<String, Map<String, Object>> fallback) {
        List<CompletableFuture<Map<String, Object>>> asked = new ArrayList<>();
        for (String member : members) {
            asked.add(read(member).exceptionally(failure -> fallback.apply(member)));
        }
        return asked.stream().map(CompletableFuture::join).toList();
    }

    private CompletableFuture<Map<String, Object>> read(String member) {
        Reading cached = cache.get(member);
        long now = System.nanoTime();
        if (cached != null && now - cached.atNanos < FRESH_MILLIS * 1_000_000) {
            return CompletableFuture.completedFuture(cached.node);
        }
        return cluster.readingsOf(member).thenApply(bytes -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> node = new LinkedHashMap<>(mapper.readValue(bytes, Map.class));
            cache.put(member, new Reading(now, node));
            return node;
        });
    }
}
