package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.impl.Client;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Resource alarms on stream protocol connections, the broker's readings fed by the test. As RabbitMQ's stream
 * reader, only the disk alarm counts: while it is up, declaring a publisher is refused (0x11), and a connection with
 * publishers is no longer read after the frame that found the alarm up, while a connection without publishers goes
 * on; once it clears, what waited is read and confirmed, nothing lost. The memory alarm holds no stream publisher.
 */
@ExtendWith(LeakDetection.class)
class StreamProtocolAlarmTest {
    private static final Duration QUIET = Duration.ofMillis(500);

    private static Client.ClientParameters parameters(RunningBroker broker) {
        return new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort());
    }

    private static List<com.rabbitmq.stream.Message> message(Client client, String body) {
        return List.of(client.messageBuilder().addData(StreamClients.bytes(body)).build());
    }

    /** A client that takes every chunk and asks for the next, its messages' bodies in {@code received}. */
    private static Client consumer(RunningBroker broker, List<String> received) {
        return new Client(parameters(broker).chunkListener((c, subscription, offset, messages, data) -> {
            c.credit(subscription, 1);
            return null;
        }).messageListener((subscription, offset, chunkTimestamp, committedChunkId, chunkContext, message) ->
            received.add(StreamClients.text(message))));
    }

    @Test
    void theDiskAlarmBlocksAPublishingConnectionWhileAConsumerGoesOn() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            ForcedAlarms alarms = broker.forceAlarms();
            Set<Long> confirmed = ConcurrentHashMap.newKeySet();
            List<String> received = Collections.synchronizedList(new ArrayList<>());
            Client publisher = new Client(parameters(broker)
                .publishConfirmListener((id, publishingId) -> confirmed.add(publishingId)));
            Client consumer = consumer(broker, received);
            try {
                assertThat(publisher.create("alarmed").isOk()).isTrue();
                assertThat(publisher.declarePublisher((byte) 0, null, "alarmed").isOk()).isTrue();
                assertThat(consumer.subscribe((byte) 0, "alarmed", OffsetSpecification.first(), 1).isOk()).isTrue();
                publisher.publish((byte) 0, message(publisher, "before"), m -> 1L);
                Amqp091Support.await().atMost(TIMEOUT).until(() -> confirmed.contains(1L)
                    && received.contains("before"));

                alarms.raise(Resource.DISK);
                assertThat(publisher.declarePublisher((byte) 1, null, "alarmed").getResponseCode())
                    .as("no new publisher during the alarm, and the frame that found it up is answered")
                    .isEqualTo((short) 0x11);
                publisher.publish((byte) 0, message(publisher, "during-0"), m -> 2L);
                publisher.publish((byte) 0, message(publisher, "during-1"), m -> 3L);
                assertThat(consumer.metadata("alarmed").get("alarmed").isResponseOk())
                    .as("a connection without publishers is read").isTrue();
                Amqp091Support.await().during(QUIET).atMost(QUIET.plus(TIMEOUT))
                    .until(() -> confirmed.size() == 1 && received.size() == 1);

                alarms.clear(Resource.DISK);
                Amqp091Support.await().atMost(TIMEOUT).until(() -> confirmed.containsAll(Set.of(2L, 3L))
                    && received.size() == 3);
                assertThat(received).containsExactly("before", "during-0", "during-1");
            } finally {
                publisher.close();
                consumer.close();
            }
        }
    }

    @Test
    void aConnectionWithoutPublishersIsReadDuringTheDiskAlarm() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            ForcedAlarms alarms = broker.forceAlarms();
            Client client = new Client(parameters(broker));
            try {
                alarms.raise(Resource.DISK);
                assertThat(client.create("quiet").isOk()).isTrue();
                assertThat(client.metadata("quiet").get("quiet").isResponseOk()).isTrue();
                assertThat(client.subscribe((byte) 0, "quiet", OffsetSpecification.first(), 1).isOk()).isTrue();
            } finally {
                alarms.clear(Resource.DISK);
                client.close();
            }
        }
    }

    @Test
    void theMemoryAlarmHoldsNoStreamPublisher() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            ForcedAlarms alarms = broker.forceAlarms();
            Set<Long> confirmed = ConcurrentHashMap.newKeySet();
            List<String> received = Collections.synchronizedList(new ArrayList<>());
            Client publisher = new Client(parameters(broker)
                .publishConfirmListener((id, publishingId) -> confirmed.add(publishingId)));
            Client consumer = consumer(broker, received);
            try {
                assertThat(publisher.create("memory").isOk()).isTrue();
                alarms.raise(Resource.MEMORY);
                assertThat(publisher.declarePublisher((byte) 0, null, "memory").isOk()).isTrue();
                assertThat(consumer.subscribe((byte) 0, "memory", OffsetSpecification.first(), 1).isOk()).isTrue();
                publisher.publish((byte) 0, message(publisher, "one"), m -> 1L);
                publisher.publish((byte) 0, message(publisher, "two"), m -> 2L);
                Amqp091Support.await().atMost(TIMEOUT).until(() -> confirmed.containsAll(Set.of(1L, 2L))
                    && received.size() == 2);
                assertThat(received).containsExactly("one", "two");
            } finally {
                alarms.clear(Resource.MEMORY);
                publisher.close();
                consumer.close();
            }
        }
    }
}
