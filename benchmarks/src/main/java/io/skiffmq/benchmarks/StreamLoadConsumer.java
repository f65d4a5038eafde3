package io.skiffmq.benchmarks;

import com.rabbitmq.stream.impl.Client;
import io.netty.channel.EventLoopGroup;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One consumer of a {@link StreamLoad} run: a connection of its own with one subscription, credit given back a
 * chunk at a time as chunks arrive (as the stream client's consumers do by default). Counts chunks, their bytes and
 * messages; records end-to-end latency for messages this run's producers sent ({@code --offset=next} with
 * producers). Its state is its connection's event loop's, but {@link #done}.
 */
final class StreamLoadConsumer {
    private static final byte SUBSCRIPTION = 0;

    private final Client client;
    private final StreamLoadCounters counters;
    private final Map<String, String> options;
    private final long count;
    private final boolean latency;
    /** With a filter, a run with a count ends after a while without chunks: the ruled-out ones never come. */
    private final boolean filtered;
    /** That while ({@code --filter-idle-ms}). */
    private final long idleNanos;
    private long consumed;
    private volatile boolean done;
    /** When the last chunk came ({@link System#nanoTime()}), 0 before the first. */
    private volatile long lastChunk;

    /**
     * Connects; {@link #subscribe} starts reading.
     *
     * @param count messages to read, 0 for as many as the run's time allows
     */
    StreamLoadConsumer(Map<String, String> options, EventLoopGroup group, StreamLoadCounters counters, long count) {
        this.options = options;
        this.counters = counters;
        this.count = count;
        this.latency = Integer.parseInt(options.get("producers")) > 0 && options.get("offset").equals("next");
        this.filtered = !options.get("filter").isEmpty();
        this.idleNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
            Long.parseLong(options.get("filter-idle-ms")));
        this.client = new Client(StreamLoad.parameters(options, group)
            .chunkListener((c, subscription, offset, messages, dataSize) -> {
                counters.chunks.increment();
                counters.bytes.add(dataSize);
                lastChunk = System.nanoTime();
                c.credit(subscription, 1);
                return null;
            })
            .messageListener((subscription, offset, chunkTimestamp, committed, chunk, message) ->
                received(((StreamLoadCodec.Received) message).sentAt()))
            .shutdownListener(context -> {
                if (!done) {
                    counters.fail("a consumer's connection closed: " + context.getShutdownReason());
                }
            }));
    }

    void subscribe() {
        Map<String, String> properties = new LinkedHashMap<>();
        String[] filter = options.get("filter").isEmpty() ? new String[0] : options.get("filter").split(",");
        for (int i = 0; i < filter.length; i++) {
            properties.put("filter." + i, filter[i]);
        }
        if (filter.length > 0) {
            properties.put("match-unfiltered", options.get("match-unfiltered"));
        }
        Client.Response response = client.subscribe(SUBSCRIPTION, options.get("stream"),
            StreamLoad.offset(options.get("offset")), Integer.parseInt(options.get("credit")), properties);
        if (!response.isOk()) {
            throw new IllegalStateException("cannot subscribe to " + options.get("stream") + ": response code "
                + response.getResponseCode());
        }
    }

    private void received(long sentAt) {
        long now = System.nanoTime();
        if (sentAt < 0) {
            counters.errors.increment();
        } else if (latency) {
            counters.latency.recordValue(Math.max(0, (now - sentAt) / 1000));
        }
        counters.consumed.increment();
        counters.lastConsume.set(now);
        if (count > 0 && ++consumed >= count) {
            done = true;
        }
    }

    /**
     * With a count: it has read that many, or, filtering, it read something and then nothing for
     * {@code --filter-idle-ms} (the run's producers done).
     */
    boolean done() {
        long last = lastChunk;
        return done || filtered && last != 0 && System.nanoTime() - last > idleNanos;
    }

    void close() {
        done = true;
        client.close();
    }
}
