package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 17, item 4, for AMQP 0-9-1: the corpus of {@code src/test/resources/corpora/amqp091/} (mutated valid
 * conversations, {@link Amqp091Corpus}) after the 0-9-1 protocol header, and the codec's Jazzer inputs
 * ({@code broker-codec/src/test/resources/.../Amqp091FuzzTestInputs/}, sent as they are: they start with their
 * header), each on its own connection, while a RabbitMQ Java client bystander does round trips; then the same
 * checks as {@link Amqp10CorpusReplayTest}.
 */
@ExtendWith(LeakDetection.class)
class Amqp091CorpusReplayTest {
    private static final byte[] HEADER = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};
    private static final String JAZZER_INPUTS =
        "broker-codec/src/test/resources/io/skiffmq/codec/amqp091/Amqp091FuzzTestInputs";

    @Test
    void theCorpusFilesAreWhatTheGeneratorMakes() {
        Path dir = repositoryRoot().resolve(Amqp091Corpus.DIRECTORY);
        List<Amqp091Corpus.Input> generated = Amqp091Corpus.generate();
        List<Path> files = CorpusReplay.files(dir);
        assertThat(files).as("run Amqp091Corpus.main to write them again").hasSize(generated.size());
        for (Amqp091Corpus.Input input : generated) {
            assertThat(CorpusReplay.read(dir.resolve(input.name() + ".bin"))).as(input.name())
                .isEqualTo(input.bytes());
        }
        assertThat(files.stream().mapToLong(f -> f.toFile().length()).sum()).as("the corpus' bytes")
            .isLessThan(256 * 1024);
    }

    @Test
    void theBrokerSurvivesEveryCorpusFile() throws Exception {
        Path root = repositoryRoot();
        Path corpus = root.resolve(Amqp091Corpus.DIRECTORY);
        List<CorpusReplay.Input> inputs = new ArrayList<>(
            CorpusReplay.variants(corpus, CorpusReplay.files(corpus), Map.of("0-9-1", HEADER)));
        Path jazzer = root.resolve(JAZZER_INPUTS);
        if (Files.isDirectory(jazzer)) {
            inputs.addAll(CorpusReplay.variants(jazzer, CorpusReplay.files(jazzer), Map.of("jazzer", new byte[0])));
        }
        // the corpus' broken logins would otherwise use up 127.0.0.1's failed-login budget (login-failure-burst),
        // and the fresh client at the end would be refused unchecked
        String[] settings = {ReplayWatch.BROKER_SETTINGS[0], "login-failure-burst=0"};
        try (ReplayWatch watch = new ReplayWatch();
                RunningBroker broker = RunningBroker.start(settings);
                Bystander bystander = Bystander.amqp091(broker.port())) {
            watch.started(bystander);
            CorpusReplay.Result result = CorpusReplay.replay(broker.port(), inputs, ReplayWatch.CONCURRENCY,
                ReplayWatch.DEADLINE, ReplayOutcomes::amqp091);
            watch.report("AMQP 0-9-1 corpus", result, result.count("connection.close 541"));
            assertThat(result.connections()).isEqualTo(inputs.size());
            assertThat(result.count(CorpusReplay.CONNECT_FAILED)).isZero();

            watch.assertBystanderHealthy(bystander);
            try (Bystander fresh = Bystander.amqp091(broker.port())) {
                watch.assertRoundTrips(fresh);
            }
            watch.assertNoLeaksAndHeapBack();
        }
    }

    /** The directory holding {@code broker-server/}, found upwards from the working directory. */
    static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(Amqp091Corpus.DIRECTORY))) {
                return dir;
            }
        }
        throw new IllegalStateException("no " + Amqp091Corpus.DIRECTORY + " above " + Path.of("").toAbsolutePath());
    }
}
