package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 17, item 4: every file of {@code ../shared/corpora/amqp10/} replayed against a live broker three ways (raw,
 * after the AMQP header, after the SASL header), each on its own connection, while a Qpid JMS bystander does round
 * trips. Afterwards: the bystander never failed and kept going, no buffer leaked, the heap after GC is back near
 * where it started, and the broker still takes a new connection. The broker's close conditions are counted and
 * printed, with the ERROR lines it logged ({@link ReplayWatch}).
 */
@ExtendWith(LeakDetection.class)
class Amqp10CorpusReplayTest {
    private static final byte[] AMQP_HEADER = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};
    private static final byte[] SASL_HEADER = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};

    @Test
    void theBrokerSurvivesEveryCorpusFileThreeWays() throws Exception {
        Path corpus = CorpusReplay.sharedCorpus();
        if (corpus == null && System.getenv("CI") != null) {
            throw new IllegalStateException("../shared/corpora/amqp10 not found: CI must run with shared/ beside"
                + " the checkout");
        }
        Assumptions.assumeTrue(corpus != null, "../shared/corpora/amqp10 is not beside the checkout");
        Map<String, byte[]> prefixes = new LinkedHashMap<>();
        prefixes.put("raw", new byte[0]);
        prefixes.put("amqp", AMQP_HEADER);
        prefixes.put("sasl", SASL_HEADER);
        List<CorpusReplay.Input> inputs = CorpusReplay.variants(corpus, CorpusReplay.files(corpus), prefixes);

        try (ReplayWatch watch = new ReplayWatch();
                RunningBroker broker = RunningBroker.start(ReplayWatch.BROKER_SETTINGS);
                Bystander bystander = Bystander.amqp10(broker.port())) {
            watch.started(bystander);
            CorpusReplay.Result result = CorpusReplay.replay(broker.port(), inputs, ReplayWatch.CONCURRENCY,
                ReplayWatch.DEADLINE, ReplayOutcomes::amqp10);
            watch.report("AMQP 1.0 corpus", result, result.count(ReplayOutcomes.INTERNAL_ERROR));
            assertThat(result.connections()).isEqualTo(inputs.size());
            assertThat(result.count(CorpusReplay.CONNECT_FAILED)).isZero();

            watch.assertBystanderHealthy(bystander);
            try (Bystander fresh = Bystander.amqp10(broker.port())) {
                watch.assertRoundTrips(fresh);
            }
            watch.assertNoLeaksAndHeapBack();
        }
    }
}
