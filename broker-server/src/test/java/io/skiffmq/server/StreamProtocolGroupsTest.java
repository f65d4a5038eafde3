package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.Consumer;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.impl.Client;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Single active consumers and super streams over the stream protocol, with the stream Java client: a group's second
 * consumer takes over where the first stored its offset once the first leaves; a super stream made by the client
 * (an exchange and its partitions), messages routed to its partitions by hash and by key, and a single active
 * consumer group spread over its partitions.
 */
class StreamProtocolGroupsTest extends StreamProtocolTestBase {

    @Test
    void theNextConsumerOfAGroupTakesOverWhereTheActiveOneStoredItsOffset() throws Exception {
        environment.streamCreator().stream("sac").create();
        // two waves, the second sent once the first is confirmed: offset 50 starts a chunk. A consumer starts at
        // the first message of the chunk holding its offset (as from RabbitMQ, whose stream client does not skip
        // the messages before the offset a consumer update answered), so offset 50 must not share one with 49.
        try (Producer producer = environment.producerBuilder().stream("sac").build()) {
            assertThat(StreamClients.sendAndConfirm(producer, "a", 50)).isEmpty();
            assertThat(StreamClients.sendAndConfirm(producer, "b", 50)).isEmpty();
        }
        List<Long> first = Collections.synchronizedList(new ArrayList<>());
        List<Long> second = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch stored = new CountDownLatch(1);
        Consumer active = environment.consumerBuilder().stream("sac").name("group").singleActiveConsumer()
            .offset(OffsetSpecification.first()).manualTrackingStrategy().builder()
            .messageHandler((context, message) -> {
                first.add(context.offset());
                if (context.offset() == 49) {
                    context.storeOffset();
                    stored.countDown();
                }
            }).build();
        Amqp091Support.await().atMost(TIMEOUT).until(() -> first.size() >= 100);
        Consumer waiting = environment.consumerBuilder().stream("sac").name("group").singleActiveConsumer()
            .offset(OffsetSpecification.first()).manualTrackingStrategy().builder()
            .messageHandler((context, message) -> second.add(context.offset())).build();
        assertThat(stored.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Amqp091Support.await().atMost(TIMEOUT).until(() -> environment.queryStreamStats("sac") != null
            && storedOffset("group", "sac") == 49);
        assertThat(second).as("nothing while the first is active").isEmpty();
        active.close();
        Amqp091Support.await().atMost(TIMEOUT).until(() -> second.contains(99L));
        assertThat(second.get(0)).as("from after the stored offset, of %s", second).isEqualTo(50L);
        waiting.close();
        environment.deleteStream("sac");
    }

    /** True once each of the super stream's partitions has one active consumer in the group, none stepping down. */
    private static boolean groupSettled(String superStream, int partitions) {
        return java.util.stream.IntStream.range(0, partitions).allMatch(p -> broker.streams()
            .groupMembers("/", superStream + "-" + p).stream().filter(m -> m.active()).count() == 1);
    }

    private static long storedOffset(String reference, String stream) throws Exception {
        Client client = new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
        try {
            Client.QueryOffsetResponse response = client.queryOffset(reference, stream);
            return response.isOk() ? response.getOffset() : -1;
        } finally {
            client.close();
        }
    }

    @Test
    void aSuperStreamRoutesByHashAndByKeyAndSpreadsAGroupOverItsPartitions() throws Exception {
        environment.streamCreator().name("invoices").superStream().partitions(3).creator().create();
        Client client = new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
        try {
            assertThat(client.partitions("invoices")).containsExactly("invoices-0", "invoices-1", "invoices-2");
            assertThat(client.route("1", "invoices")).containsExactly("invoices-1");
            assertThat(client.route("nowhere", "invoices")).isEmpty();
        } finally {
            client.close();
        }
        Map<String, Set<String>> byPartition = new ConcurrentHashMap<>();
        List<Consumer> partitionReaders = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            String partition = "invoices-" + p;
            partitionReaders.add(environment.consumerBuilder().stream(partition).offset(OffsetSpecification.first())
                .messageHandler((context, message) -> byPartition.computeIfAbsent(partition,
                    k -> ConcurrentHashMap.newKeySet()).add(StreamClients.text(message))).build());
        }
        try (Producer hashed = environment.producerBuilder().superStream("invoices")
                .routing(message -> message.getProperties().getMessageIdAsString()).producerBuilder().build();
                Producer keyed = environment.producerBuilder().superStream("invoices")
                    .routing(message -> "2").key().producerBuilder().build()) {
            for (int i = 0; i < 300; i++) {
                hashed.send(hashed.messageBuilder().properties().messageId("id" + i).messageBuilder()
                    .addData(StreamClients.bytes("h" + i)).build(), status -> { });
            }
            for (int i = 0; i < 30; i++) {
                keyed.send(keyed.messageBuilder().addData(StreamClients.bytes("k" + i)).build(), status -> { });
            }
            Amqp091Support.await().atMost(TIMEOUT).until(() -> byPartition.values().stream()
                .mapToInt(Set::size).sum() == 330);
        }
        assertThat(byPartition).hasSize(3).allSatisfy((p, bodies) -> assertThat(bodies).isNotEmpty());
        assertThat(byPartition.get("invoices-2")).as("the keyed messages")
            .containsAll(java.util.stream.IntStream.range(0, 30).mapToObj(i -> "k" + i).toList());
        partitionReaders.forEach(Consumer::close);

        // a single active consumer group of two over the three partitions: each partition has one active member,
        // the one at its index modulo the group's size (b takes partition 1 over from a, which stepped down)
        Map<String, Set<String>> consumedBy = new ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicInteger fresh = new java.util.concurrent.atomic.AtomicInteger();
        List<Consumer> group = new ArrayList<>();
        for (String member : List.of("a", "b")) {
            group.add(environment.consumerBuilder().superStream("invoices").name("app").singleActiveConsumer()
                .offset(OffsetSpecification.next())
                .messageHandler((context, message) -> {
                    if (StreamClients.text(message).startsWith("n")) {
                        consumedBy.computeIfAbsent(context.stream(), k -> ConcurrentHashMap.newKeySet()).add(member);
                        fresh.incrementAndGet();
                    }
                }).build());
            Amqp091Support.await().atMost(TIMEOUT).until(() -> groupSettled("invoices", 3));
        }
        try (Producer hashed = environment.producerBuilder().superStream("invoices")
                .routing(message -> message.getProperties().getMessageIdAsString()).producerBuilder().build()) {
            for (int i = 0; i < 300; i++) {
                hashed.send(hashed.messageBuilder().properties().messageId("id" + i).messageBuilder()
                    .addData(StreamClients.bytes("n" + i)).build(), status -> { });
            }
            Amqp091Support.await().atMost(TIMEOUT).until(() -> fresh.get() == 300);
        }
        assertThat(consumedBy).containsOnlyKeys("invoices-0", "invoices-1", "invoices-2");
        assertThat(consumedBy.get("invoices-0")).containsExactly("a");
        assertThat(consumedBy.get("invoices-1")).containsExactly("b");
        assertThat(consumedBy.get("invoices-2")).containsExactly("a");
        group.forEach(Consumer::close);
        environment.deleteSuperStream("invoices");
        assertThat(broker.vhost("/").exchange("invoices")).isNull();
        assertThat(broker.vhost("/").queue("invoices-0")).isNull();
    }
}
