package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.perf.PerfTest;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * RabbitMQ's PerfTest, run in-process through {@code PerfTest.main(args, PerfTestOptions)} with an exiter that
 * records the exit status instead of calling {@code System.exit}. Every run has message limits ({@code -C}
 * published by each producer, {@code -D} received by each consumer) and must stop because of them, not the
 * {@code -z} safety limit; the broker's own counts (passive declares) check what PerfTest does not: that the
 * producer published exactly {@code -C} (confirmed) and the consumers acknowledged all of it.
 */
@ExtendWith(LeakDetection.class)
class Amqp091PerfTestTest {
    private static final String PRODUCER_LIMIT = "Producer reached message limit";
    private static final String CONSUMER_LIMIT = "Consumer reached message limit";

    private static Amqp091Target target;
    private final List<String> queues = new ArrayList<>();

    /** What one run printed and the status it would have exited with. */
    private record Run(int status, String out, String err) {
        String stopLine() {
            return out.lines().filter(line -> line.startsWith("test stopped")).findFirst().orElse("(no stop line)");
        }
    }

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        // "direct" is PerfTest's default exchange (declared durable, type direct, by every run without --exchange)
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, List.of("direct"));
    }

    private String queue(String prefix) {
        String name = Amqp091Spring.unique(prefix);
        queues.add(name);
        return name;
    }

    /** Runs PerfTest against the target with {@code args}; {@code -z 30} bounds a run that never reaches a limit. */
    private static Run perfTest(String... args) {
        AtomicInteger status = new AtomicInteger(-1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] all = Stream.concat(Stream.of("--uri", target.uri(), "--time", "30", "--id", "skiffmq-test"),
            Stream.of(args)).toArray(String[]::new);
        PerfTest.main(all, new PerfTest.PerfTestOptions()
            .setSystemExiter(status::set)
            .setSkipSslContextConfiguration(true)
            .setArgumentLookup(name -> null) // no RABBITMQ_PERF_TEST_* environment variables
            .setConsoleOut(new PrintStream(out, true, StandardCharsets.UTF_8))
            .setConsoleErr(new PrintStream(err, true, StandardCharsets.UTF_8)));
        Run run = new Run(status.get(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        assertThat(run.status()).as("exit status; stderr:%n%s%nstdout:%n%s", run.err(), run.out()).isZero();
        assertThat(run.stopLine()).as(run.out()).doesNotContain("time limit");
        return run;
    }

    private static void assertCounts(String queue, int ready, int consumers) {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
            assertThat(Amqp091Spring.counts(target, queue)).as(queue).containsExactly(ready, consumers));
    }

    @Test
    void persistentWithConfirmsAndMultipleAcksOneToOne() {
        String queue = queue("perf-persistent");
        Run run = perfTest("--producers", "1", "--consumers", "1", "--pmessages", "1000", "--cmessages", "1000",
            "--queue", queue, "--auto-delete", "false", "--flag", "persistent", "--confirm", "100",
            "--multi-ack-every", "50", "--qos", "100", "--size", "12");
        assertThat(run.stopLine()).contains(PRODUCER_LIMIT).contains(CONSUMER_LIMIT);
        // anything the consumer left unacknowledged, or received past its limit, is ready again once it has gone
        assertCounts(queue, 0, 0);
    }

    @Test
    void producerAloneThenConsumerAloneCountExactlyOnTheBroker() {
        String queue = queue("perf-split");
        Run produce = perfTest("--producers", "1", "--consumers", "0", "--pmessages", "1000", "--queue", queue,
            "--auto-delete", "false", "--confirm", "100", "--size", "100");
        assertThat(produce.stopLine()).contains(PRODUCER_LIMIT).doesNotContain(CONSUMER_LIMIT);
        assertCounts(queue, 1000, 0);

        Run consume = perfTest("--producers", "0", "--consumers", "1", "--cmessages", "1000", "--queue", queue,
            "--auto-delete", "false", "--multi-ack-every", "100", "--qos", "200");
        assertThat(consume.stopLine()).contains(CONSUMER_LIMIT).doesNotContain(PRODUCER_LIMIT);
        assertCounts(queue, 0, 0);
    }

    @Test
    void transientWithAutoAckOneToOne() {
        String queue = queue("perf-autoack");
        Run run = perfTest("--producers", "1", "--consumers", "1", "--pmessages", "1000", "--cmessages", "1000",
            "--queue", queue, "--auto-delete", "false", "--autoack", "--size", "12");
        assertThat(run.stopLine()).contains(PRODUCER_LIMIT).contains(CONSUMER_LIMIT);
        assertCounts(queue, 0, 0);
    }

    @Test
    void fanoutThroughAmqFanoutToThreeQueues() {
        String prefix = Amqp091Spring.unique("perf-fanout");
        for (int i = 1; i <= 3; i++) {
            queues.add(prefix + "-" + i);
        }
        // PerfTest declares amq.fanout itself (exchange.declare amq.fanout, fanout, durable): RabbitMQ accepts an
        // equivalent declare of an amq.* exchange that exists
        Run run = perfTest("--producers", "1", "--consumers", "3", "--pmessages", "500", "--cmessages", "500",
            "--exchange", "amq.fanout", "--type", "fanout", "--queue-pattern", prefix + "-%d",
            "--queue-pattern-from", "1", "--queue-pattern-to", "3", "--auto-delete", "false", "--confirm", "100",
            "--multi-ack-every", "10");
        assertThat(run.stopLine()).contains(PRODUCER_LIMIT).contains(CONSUMER_LIMIT + " [3]");
        for (String queue : queues) {
            assertCounts(queue, 0, 0);
        }
    }

    /**
     * Seed 004's flags on a stream ({@code -qa x-queue-type=stream --qos 10000 --multi-ack-every 1000 -ca
     * x-stream-offset=first}), small: every consumer reads the whole stream from the first, and the stream keeps it
     * (acks remove nothing). PerfTest declares its queue durable only with {@code --flag persistent}, and
     * auto-delete unless told not to: a stream is neither non-durable nor auto-delete.
     */
    @Test
    void seed004sStreamFlagsReadTheWholeStreamFromTheFirst() throws Exception {
        int count = 5_000; // enough for several chunks and credit rounds; the seed's rates are benchmarks' business
        String stream = queue("perf-stream");
        String[] declared = {"--queue", stream, "--queue-args", "x-queue-type=stream", "--auto-delete", "false",
            "--flag", "persistent"};
        Run produce = perfTest(Stream.concat(Stream.of("--producers", "1", "--consumers", "0", "--pmessages",
            String.valueOf(count), "--confirm", "1000", "--size", "12"), Stream.of(declared)).toArray(String[]::new));
        assertThat(produce.stopLine()).contains(PRODUCER_LIMIT);
        for (int consumers : new int[] {1, 2}) {
            Run consume = perfTest(Stream.concat(Stream.of("--producers", "0", "--consumers",
                String.valueOf(consumers), "--cmessages", String.valueOf(count), "--qos", "10000",
                "--multi-ack-every", "1000", "--consumer-args", "x-stream-offset=first"), Stream.of(declared))
                .toArray(String[]::new));
            assertThat(consume.stopLine()).contains(CONSUMER_LIMIT);
        }
        assertThat(Amqp091Spring.counts(target, stream)[0]).as("read, not removed").isEqualTo(count);
    }
}
