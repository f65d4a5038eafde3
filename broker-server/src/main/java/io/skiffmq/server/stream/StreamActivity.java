package io.skiffmq.server.stream;

import java.util.List;
import java.util.Map;

/**
 * A stream connection's publishers and subscriptions as RabbitMQ lists them ({@code rabbit_stream_reader}'s
 * {@code publisher_i} and {@code consumer_i}; the HTTP API's {@code /api/stream/publishers} and
 * {@code /api/stream/consumers}, {@code list_stream_publishers} and {@code list_stream_consumers}), taken on the
 * connection's event loop by {@link StreamConnectionHandler#activity()}. Immutable.
 *
 * @param blocked whether publish flow control holds the connection ({@code connection_state} blocked)
 */
public record StreamActivity(List<Publisher> publishers, List<Consumer> consumers, boolean blocked) {
    /** A connection with nothing: one that is gone, or not open. */
    public static final StreamActivity NONE = new StreamActivity(List.of(), List.of(), false);

    /**
     * @param reference empty for a publisher without deduplication, as RabbitMQ shows it
     */
    public record Publisher(int id, String stream, String reference, long published, long confirmed,
            long errored) {
    }

    /**
     * @param consumed messages sent ({@code messages_consumed})
     * @param offset the offset of the last message sent, 0 before any (RabbitMQ's consumer offset counter)
     * @param offsetLag the stream's committed offset less {@code offset}, 0 for an empty stream or one read to its
     *     end before anything was sent ({@code rabbit_stream_utils:offset_lag/4})
     * @param credits the chunks it may still be sent
     * @param activityStatus {@code up}, or for a single active consumer {@code single_active} or {@code waiting}
     */
    public record Consumer(int subscriptionId, String stream, long consumed, long offset, long offsetLag,
            int credits, boolean active, String activityStatus, Map<String, String> properties) {
    }
}
