package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ConfirmListener;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a broker (a child JVM) while publishers stream into a stream over 0-9-1 with confirms: after the
 * restart every confirmed message is in the stream, once, and the offsets run 0, 1, 2, … without a gap (a torn
 * chunk at the end is cut off whole). Rounds alternate {@code sync-policy} {@code sync} and {@code os}: a stream's
 * confirm means the chunk is in the OS page cache at least, which a kill -9 does not lose. Each round goes on with
 * the same stream, so recovery also reads what earlier recoveries left.
 *
 * <p>Rounds: {@code -Dskiffmq.crash.rounds} (3 by default, for the suite's time: both policies); the seed of the random kill points is printed.
 */
class StreamCrashRecoveryTest {
    private static final int PUBLISHERS = 3;
    private static final String STREAM = "crash-stream";

    @TempDir
    Path dataDir;

    @Test
    void everyConfirmedMessageSurvivesKill9OnceAtItsOffset() throws Exception {
        int rounds = Integer.getInteger("skiffmq.crash.rounds", 3);
        long seed = Long.getLong("skiffmq.crash.seed", System.nanoTime());
        System.out.println("StreamCrashRecoveryTest: " + rounds + " rounds, -Dskiffmq.crash.seed=" + seed);
        Random random = new Random(seed);
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        for (int round = 0; round < rounds; round++) {
            List<String> settings = List.of("--sync-policy=" + (round % 2 == 0 ? "sync" : "os"));
            try (ChildBroker broker = ChildBroker.start(dataDir, "stream-crash-" + round + "a",
                    List.of("-Xmx256m"), settings)) {
                publishAndKill(broker, round, 200 + random.nextInt(1500), confirmed);
            }
            try (ChildBroker broker = ChildBroker.start(dataDir, "stream-crash-" + round + "b",
                    List.of("-Xmx256m"), settings)) {
                List<String> stream = readAll(broker);
                assertThat(stream).as("nothing twice").doesNotHaveDuplicates();
                assertThat(Missing.from(stream, confirmed)).as("confirmed, missing in round " + round).isEmpty();
                broker.stop();
            }
        }
    }

    private static ConnectionFactory factory(ChildBroker broker) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port);
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    /** Publishers publish with confirms until the broker is killed, {@code killAfter} ms after they began. */
    private static void publishAndKill(ChildBroker broker, int round, int killAfter, Set<String> confirmed)
            throws Exception {
        try (Connection setup = factory(broker).newConnection()) {
            setup.createChannel().queueDeclare(STREAM, true, false, false, Map.of("x-queue-type", "stream",
                "x-stream-max-segment-size-bytes", 200_000));
        }
        AtomicBoolean killed = new AtomicBoolean();
        List<Thread> publishers = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int p = 0; p < PUBLISHERS; p++) {
            String prefix = "r" + round + "-p" + p + "-";
            Thread publisher = new Thread(() -> {
                try (Connection connection = factory(broker).newConnection()) {
                    Channel channel = connection.createChannel();
                    channel.confirmSelect();
                    ConcurrentNavigableMap<Long, String> unconfirmed = new ConcurrentSkipListMap<>();
                    channel.addConfirmListener(new ConfirmListener() {
                        @Override
                        public void handleAck(long tag, boolean multiple) {
                            var acked = multiple ? unconfirmed.headMap(tag, true) : unconfirmed.subMap(tag, true, tag,
                                true);
                            confirmed.addAll(acked.values());
                            acked.clear();
                        }

                        @Override
                        public void handleNack(long tag, boolean multiple) {
                            failures.add(new AssertionError("nacked " + tag));
                        }
                    });
                    for (int i = 0; ; i++) {
                        String body = prefix + i;
                        unconfirmed.put(channel.getNextPublishSeqNo(), body);
                        channel.basicPublish("", STREAM, null, body.getBytes(StandardCharsets.UTF_8));
                        if (unconfirmed.size() > 500) {
                            channel.waitForConfirms(10_000);
                        }
                    }
                } catch (Exception | Error e) {
                    if (!killed.get()) {
                        failures.add(e);
                    }
                }
            }, "stream-publisher-" + p);
            publisher.start();
            publishers.add(publisher);
        }
        int before = confirmed.size();
        long killAt = System.nanoTime() + killAfter * 1_000_000L;
        Amqp091Support.await().atMost(Duration.ofSeconds(60))
            .until(() -> System.nanoTime() >= killAt && confirmed.size() > before);
        killed.set(true);
        broker.kill();
        for (Thread publisher : publishers) {
            publisher.join(Duration.ofSeconds(30).toMillis());
        }
        assertThat(failures).isEmpty();
        System.out.printf("round %d: %d confirmed in all, killed after %d ms%n", round, confirmed.size(), killAfter);
    }

    /** Every message of the stream, from the first, checking their offsets run without a gap. */
    private static List<String> readAll(ChildBroker broker) throws Exception {
        try (Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            int count = channel.queueDeclarePassive(STREAM).getMessageCount();
            channel.basicQos(1000);
            Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
            channel.basicConsume(STREAM, false, Map.of("x-stream-offset", "first"), recorder);
            long[] acked = {0};
            Amqp091Support.await().atMost(Duration.ofSeconds(60)).until(() -> {
                if (!recorder.deliveries.isEmpty() && recorder.lastTag() > acked[0]) {
                    acked[0] = recorder.lastTag();
                    channel.basicAck(acked[0], true); // only gives the prefetch back
                }
                return recorder.deliveries.size() >= count;
            });
            List<com.rabbitmq.client.Delivery> got = recorder.awaitExactly(count);
            assertThat(got.stream().map(d -> (Long) d.getProperties().getHeaders().get("x-stream-offset")))
                .as("offsets without a gap").isEqualTo(LongStream.range(0, count).boxed().toList());
            return recorder.bodies();
        }
    }
}
