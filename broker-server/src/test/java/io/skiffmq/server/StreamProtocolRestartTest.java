package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.ConfirmationStatus;
import com.rabbitmq.stream.Consumer;
import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.impl.Client;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream protocol across a restart of a broker in a child JVM: a named producer's deduplication and a
 * consumer's stored offset, both kept in the log; and a kill -9 while a producer streams with confirms, after which
 * every confirmed message is there once, at offsets without a gap.
 */
class StreamProtocolRestartTest {
    @TempDir
    Path dataDir;

    private static Client client(ChildBroker broker) throws Exception {
        return new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
    }

    private static Environment environment(ChildBroker broker) throws Exception {
        return StreamClients.builder(broker.streamPort()).build();
    }

    /** Sends the messages {@code m<id>} with publishing ids {@code from..to}, waiting for every confirm. */
    private static void send(Producer producer, int from, int to) throws Exception {
        CountDownLatch done = new CountDownLatch(to - from + 1);
        List<ConfirmationStatus> failed = Collections.synchronizedList(new ArrayList<>());
        for (int id = from; id <= to; id++) {
            producer.send(producer.messageBuilder().publishingId(id).addData(StreamClients.bytes("m" + id)).build(),
                status -> {
                    if (!status.isConfirmed()) {
                        failed.add(status);
                    }
                    done.countDown();
                });
        }
        assertThat(done.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(failed).isEmpty();
    }

    /** Every message of the stream, from the first, checking the offsets run 0, 1, 2, … */
    private static List<String> readAll(Environment environment, String stream, int count) {
        List<String> bodies = Collections.synchronizedList(new ArrayList<>());
        List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
        try (Consumer consumer = environment.consumerBuilder().stream(stream).offset(OffsetSpecification.first())
                .messageHandler((context, message) -> {
                    offsets.add(context.offset());
                    bodies.add(StreamClients.text(message));
                }).build()) {
            Amqp091Support.await().atMost(TIMEOUT).until(() -> bodies.size() >= count);
        }
        assertThat(offsets).isEqualTo(IntStream.range(0, count).mapToObj(i -> (long) i).toList());
        return List.copyOf(bodies);
    }

    @Test
    void deduplicationAndStoredOffsetsSurviveARestart() throws Exception {
        try (ChildBroker broker = ChildBroker.start(dataDir, "stream-dedup-a", List.of("-Xmx256m"), List.of())) {
            try (Environment environment = environment(broker)) {
                environment.streamCreator().stream("dedup").create();
                try (Producer producer = environment.producerBuilder().stream("dedup").name("p1").build()) {
                    send(producer, 1, 100);
                    send(producer, 50, 150); // 50 to 100 again: dropped, and confirmed
                }
                environment.storeOffset("c1", "dedup", 41);
                assertThat(readAll(environment, "dedup", 150)).isEqualTo(bodies(1, 150));
            }
            Client client = client(broker);
            try {
                assertThat(client.queryPublisherSequence("p1", "dedup")).isEqualTo(150);
                assertThat(client.queryOffset("c1", "dedup").getOffset()).isEqualTo(41);
            } finally {
                client.close();
            }
            broker.stop();
        }
        try (ChildBroker broker = ChildBroker.start(dataDir, "stream-dedup-b", List.of("-Xmx256m"), List.of())) {
            Client client = client(broker);
            try {
                assertThat(client.queryPublisherSequence("p1", "dedup")).as("after the restart").isEqualTo(150);
                assertThat(client.queryOffset("c1", "dedup").getOffset()).isEqualTo(41);
                assertThat(client.queryOffset("unknown", "dedup").getResponseCode())
                    .as("no offset").isEqualTo((short) 0x13);
            } finally {
                client.close();
            }
            try (Environment environment = environment(broker)) {
                try (Producer producer = environment.producerBuilder().stream("dedup").name("p1").build()) {
                    send(producer, 140, 160);
                }
                assertThat(readAll(environment, "dedup", 160)).isEqualTo(bodies(1, 160));
                // a named consumer that tracks its offset goes on after the one stored
                List<Long> resumed = Collections.synchronizedList(new ArrayList<>());
                try (Consumer consumer = environment.consumerBuilder().stream("dedup").name("c1")
                        .manualTrackingStrategy().builder()
                        .messageHandler((context, message) -> resumed.add(context.offset())).build()) {
                    Amqp091Support.await().atMost(TIMEOUT).until(() -> resumed.contains(159L));
                }
                assertThat(resumed.get(0)).isEqualTo(42);
            }
            broker.stop();
        }
    }

    private static List<String> bodies(int from, int to) {
        return IntStream.rangeClosed(from, to).mapToObj(i -> "m" + i).toList();
    }

    @Test
    void aKill9LosesNoConfirmedMessage() throws Exception {
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        Random random = new Random();
        for (int round = 0; round < 2; round++) {
            List<String> settings = List.of("--sync-policy=" + (round == 0 ? "sync" : "os"));
            try (ChildBroker broker = ChildBroker.start(dataDir, "stream-kill-" + round + "a", List.of("-Xmx256m"),
                    settings)) {
                try (Environment environment = environment(broker)) {
                    if (round == 0) {
                        environment.streamCreator().stream("killed").maxSegmentSizeBytes(
                            com.rabbitmq.stream.ByteCapacity.kB(200)).create();
                    }
                    AtomicBoolean killed = new AtomicBoolean();
                    // a send blocked on the unconfirmed limit when the broker dies would wait out the default 10 s
                    Producer producer = environment.producerBuilder().stream("killed")
                        .enqueueTimeout(Duration.ofMillis(500)).build();
                    Thread publisher = new Thread(() -> {
                        for (int i = 0; !killed.get(); i++) {
                            String body = "r" + System.identityHashCode(producer) + "-" + i;
                            try {
                                producer.send(producer.messageBuilder().addData(StreamClients.bytes(body)).build(),
                                    status -> {
                                        if (status.isConfirmed()) {
                                            confirmed.add(body);
                                        }
                                    });
                            } catch (RuntimeException e) {
                                if (killed.get()) {
                                    return; // the producer closed with its connection
                                } // else not enqueued in time: not sent, so nothing to confirm; go on
                            }
                        }
                    });
                    publisher.start();
                    int before = confirmed.size();
                    long killAt = System.nanoTime() + (300 + random.nextInt(1200)) * 1_000_000L;
                    Amqp091Support.await().atMost(TIMEOUT)
                        .until(() -> System.nanoTime() >= killAt && confirmed.size() > before + 100);
                    broker.kill();
                    killed.set(true);
                    publisher.join(TIMEOUT.toMillis());
                }
            }
            try (ChildBroker broker = ChildBroker.start(dataDir, "stream-kill-" + round + "b", List.of("-Xmx256m"),
                    settings)) {
                try (Environment environment = environment(broker)) {
                    long count = environment.queryStreamStats("killed").committedOffset() + 1;
                    List<String> stream = readAll(environment, "killed", (int) count);
                    assertThat(stream).as("nothing twice").doesNotHaveDuplicates();
                    assertThat(Missing.from(stream, confirmed)).as("confirmed, missing in round " + round).isEmpty();
                }
                broker.stop();
            }
        }
    }
}
