package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.perf.PerfTest;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * RabbitMQ's PerfTest reading streams over AMQP 0-9-1 with seed 004's flags ({@code -qa x-queue-type=stream --qos
 * 10000 --multi-ack-every 1000 -ca x-stream-offset=first}) on a small scale, run in-process as
 * {@link Amqp091PerfTestTest} runs it: the producer's messages are all confirmed, each consumer reads them all from
 * the first, and the stream keeps them (acks remove nothing). PerfTest declares its queue durable only with
 * {@code --flag persistent}, and auto-delete unless told not to: a stream is neither non-durable nor auto-delete.
 */
@ExtendWith(LeakDetection.class)
class Amqp091StreamPerfTestTest {
    private static final String PRODUCER_LIMIT = "Producer reached message limit";
    private static final String CONSUMER_LIMIT = "Consumer reached message limit";
    private static Amqp091Target target;
    private String stream;

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    @AfterEach
    void cleanUp() throws Exception {
        Amqp091Spring.deleteQueuesAndExchanges(target, List.of(stream), List.of("direct"));
    }

    private static String run(String... args) {
        AtomicInteger status = new AtomicInteger(-1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] all = Stream.concat(Stream.of("--uri", target.uri(), "--time", "60", "--id", "skiffmq-stream"),
            Stream.of(args)).toArray(String[]::new);
        PerfTest.main(all, new PerfTest.PerfTestOptions()
            .setSystemExiter(status::set)
            .setSkipSslContextConfiguration(true)
            .setArgumentLookup(name -> null)
            .setConsoleOut(new PrintStream(out, true, StandardCharsets.UTF_8))
            .setConsoleErr(new PrintStream(err, true, StandardCharsets.UTF_8)));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(status.get()).as("exit status; stderr:%n%s%nstdout:%n%s", err, printed).isZero();
        String stop = printed.lines().filter(l -> l.startsWith("test stopped")).findFirst().orElse("(none)");
        assertThat(stop).as(printed).doesNotContain("time limit");
        return stop;
    }

    @Test
    void seed004sFlagsReadTheWholeStreamFromTheFirstWithOneAndTwoConsumers() throws Exception {
        stream = Amqp091Spring.unique("perf-stream");
        String produced = run("--producers", "1", "--consumers", "0", "--pmessages", "20000", "--queue", stream,
            "--queue-args", "x-queue-type=stream", "--auto-delete", "false", "--flag", "persistent", "--confirm",
            "1000", "--size", "12");
        assertThat(produced).contains(PRODUCER_LIMIT);
        assertThat(Amqp091Spring.counts(target, stream)[0]).isEqualTo(20_000);

        for (int consumers : new int[] {1, 2}) {
            String consumed = run("--producers", "0", "--consumers", String.valueOf(consumers), "--cmessages",
                "20000", "--queue", stream, "--queue-args", "x-queue-type=stream", "--auto-delete", "false",
                "--flag", "persistent", "--qos", "10000", "--multi-ack-every", "1000", "--consumer-args", "x-stream-offset=first");
            assertThat(consumed).contains(CONSUMER_LIMIT);
        }
        assertThat(Amqp091Spring.counts(target, stream)[0]).as("read, not removed").isEqualTo(20_000);
    }
}
