package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Hostile input for port 5552: the stream codec's committed corpus
 * ({@code broker-codec/src/test/resources/io/skiffmq/codec/stream/corpus/}: valid client conversations truncated,
 * flipped, with lying sizes, lengths and counts, unknown keys, commands from the wrong end, oversized frames before
 * open) replayed against a live broker, each on its own connection, the client reading, half-closing or resetting
 * after it, while a stream Java client bystander does round trips (publish with a confirm, consume it back). Then
 * the same checks as {@link Amqp10CorpusReplayTest}: no ERROR line and no internal error close (0x0f), the
 * bystander kept going, a new client gets in, no buffer leaked, the heap is back.
 */
@ExtendWith(LeakDetection.class)
class StreamCorpusReplayTest {
    static final String CORPUS = "broker-codec/src/test/resources/io/skiffmq/codec/stream/corpus";

    @Test
    void theBrokerSurvivesEveryCorpusFileAndOtherConnectionsGoOn() throws Exception {
        Path corpus = root().resolve(CORPUS);
        List<CorpusReplay.Input> inputs = CorpusReplay.variants(corpus, CorpusReplay.files(corpus),
            Map.of("stream", new byte[0]));
        // broken logins would use up 127.0.0.1's failed-login budget and the fresh client would be refused; the
        // handshake timeout is the client's deadline less a margin, not half of it: the inputs with a whole
        // handshake and then a bad frame (closed with 0x0d, the close's answer awaited past the client's deadline)
        // log in among 32 connections at once, and on a loaded machine their logins took more than 1 s
        String[] settings = {"handshake-timeout=2000", "login-failure-burst=0"};
        try (ReplayWatch watch = new ReplayWatch();
                RunningBroker broker = RunningBroker.start(settings);
                Bystander bystander = Bystander.stream(broker.streamPort())) {
            watch.started(bystander);
            CorpusReplay.Result result = CorpusReplay.replay(broker.streamPort(), inputs, ReplayWatch.CONCURRENCY,
                ReplayWatch.DEADLINE, ReplayOutcomes::stream);
            watch.report("stream corpus", result, result.count("close 0x0f"));
            assertThat(result.connections()).isEqualTo(inputs.size());
            assertThat(result.count(CorpusReplay.CONNECT_FAILED)).isZero();
            assertThat(result.count("close 0x0d")).as("frames after open RabbitMQ cannot parse: close 0x0d")
                .isPositive();

            watch.assertBystanderHealthy(bystander);
            try (Bystander fresh = Bystander.stream(broker.streamPort())) {
                watch.assertRoundTrips(fresh);
            }
            watch.assertNoLeaksAndHeapBack();
        }
    }

    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(CORPUS))) {
                return dir;
            }
        }
        throw new IllegalStateException("no " + CORPUS + " above " + Path.of("").toAbsolutePath());
    }
}
