package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.transport.AmqpListener;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream load tool against a broker's stream port, with counts small enough for CI: producers that give their
 * messages filter values, then the bytes an unfiltered and a filtering consumer read of the stream.
 */
class StreamLoadFilterTest {
    private static final int MESSAGES = 10_000;

    @TempDir
    static Path data;
    private static AmqpListener broker;

    @BeforeAll
    static void start() throws Exception {
        broker = new AmqpListener(BrokerConfig.defaults().with("port", "0").with("bind", "127.0.0.1")
            .with("data-dir", data.toString()).with("sync-policy", "os").with("prometheus-port", "0")
            .with("management-port", "0").with("stream-port", "0"));
        broker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static StreamLoad.Result run(Map<String, String> settings) throws Exception {
        Map<String, String> options = StreamLoad.defaults();
        options.put("port", Integer.toString(broker.streamAddress().getPort()));
        options.put("stream", "filtered-load");
        options.put("count", Integer.toString(MESSAGES));
        options.put("progress", "false");
        options.putAll(settings);
        return StreamLoad.run(options);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void producersGiveFilterValuesSoAFilteringConsumerReadsAboutItsShareOfTheBytes() throws Exception {
        // one batch in flight: a chunk per batch, each of one value (ten values, 1,000 messages each in turn)
        StreamLoad.Result published = run(Map.of("consumers", "0", "batch-size", "100", "in-flight", "100",
            "filter-value-set", "v0,v1,v2,v3,v4,v5,v6,v7,v8,v9", "filter-run", "1000"));
        assertThat(published.confirmed()).isEqualTo(MESSAGES);
        assertThat(published.errors()).isZero();

        StreamLoad.Result unfiltered = run(Map.of("producers", "0", "offset", "first"));
        // a second without chunks ended it once, at 748 of them, late in a loaded full run: three here
        StreamLoad.Result filtered = run(Map.of("producers", "0", "offset", "first", "filter", "v3",
            "filter-idle-ms", "3000"));
        assertThat(unfiltered.consumed()).isEqualTo(MESSAGES);
        assertThat(filtered.consumed()).as("the chunks of v3, at least").isBetween(1_000L, 2_000L);
        double share = (double) filtered.bytes() / unfiltered.bytes();
        assertThat(share).as("bytes read filtered / unfiltered").isBetween(0.05, 0.2);
        assertThat(filtered.errors() + unfiltered.errors()).isZero();
    }
}
