package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.StreamException;
import com.rabbitmq.stream.impl.Client;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The stream protocol's commands the other tests do not reach, answered as RabbitMQ's reader answers them:
 * {@code resolve_offset_spec}, {@code stream_stats}, {@code route} and {@code partitions} of a super stream that
 * does not exist, {@code create_super_stream} and {@code delete_super_stream} refusals, and heartbeats on an idle
 * connection.
 */
class StreamProtocolCommandsTest extends StreamProtocolTestBase {
    private static final short OK = 0x01;
    private static final short STREAM_DOES_NOT_EXIST = 0x02;
    private static final short STREAM_ALREADY_EXISTS = 0x05;
    private static final short PRECONDITION_FAILED = 0x11;
    private static final short NO_OFFSET = 0x13;


    private static Client client() {
        return new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
    }

    @Test
    void resolveOffsetSpecAnswersWhereAConsumerWouldStart() throws Exception {
        environment.streamCreator().stream("resolved").create();
        Client client = client();
        try {
            assertThat(client.resolveOffsetSpec("resolved", OffsetSpecification.first()).getResponseCode())
                .as("an empty stream has no first offset").isEqualTo(NO_OFFSET);
            try (Producer producer = environment.producerBuilder().stream("resolved").build()) {
                assertThat(StreamClients.sendAndConfirm(producer, "m", 5)).isEmpty();
            }
            Client.ResolveOffsetSpecResponse first = client.resolveOffsetSpec("resolved", OffsetSpecification.first());
            assertThat(first.getResponseCode()).isEqualTo(OK);
            assertThat(first.offset()).isZero();
            assertThat(client.resolveOffsetSpec("resolved", OffsetSpecification.next()).offset()).isEqualTo(5);
            assertThat(client.resolveOffsetSpec("resolved", OffsetSpecification.offset(3)).offset()).isEqualTo(3);
            assertThat(client.resolveOffsetSpec("resolved", OffsetSpecification.offset(99)).offset())
                .as("past the end: the next offset").isEqualTo(5);
            assertThat(client.resolveOffsetSpec("nowhere", OffsetSpecification.first()).getResponseCode())
                .isEqualTo(STREAM_DOES_NOT_EXIST);
            assertThat(client.streamStats("resolved").getInfo()).containsEntry("first_chunk_id", 0L)
                .containsEntry("committed_offset", 4L);
            assertThat(client.streamStats("nowhere").getResponseCode()).isEqualTo(STREAM_DOES_NOT_EXIST);
        } finally {
            client.close();
            environment.deleteStream("resolved");
        }
    }

    @Test
    void superStreamsAreRefusedAsRabbitMqRefusesThem() throws Exception {
        environment.streamCreator().name("orders").superStream().partitions(2).creator().create();
        Client client = client();
        try {
            assertThat(client.partitions("orders")).containsExactly("orders-0", "orders-1");
            assertThat(StreamClients.createSuperStream(client, "orders", List.of("orders-0", "orders-1"), List.of("0", "1")))
                .as("the exchange exists").isEqualTo(STREAM_ALREADY_EXISTS);
            assertThat(StreamClients.createSuperStream(client, "amq.x", List.of("amq.x-0"), List.of("0")))
                .isEqualTo(PRECONDITION_FAILED);
            assertThat(StreamClients.createSuperStream(client, "twice", List.of("twice-0", "twice-0"), List.of("0", "1")))
                .as("a partition named twice").isEqualTo(PRECONDITION_FAILED);
            assertThat(client.partitions("unknown")).isEmpty();
            assertThat(client.route("key", "unknown")).isEmpty();
            environment.deleteSuperStream("orders");
            assertThat(catchThrowableOfType(StreamException.class, () -> environment.deleteSuperStream("orders"))
                .getCode()).isEqualTo(STREAM_DOES_NOT_EXIST);
        } finally {
            client.close();
        }
    }

    @Test
    void anIdleConnectionIsKeptByHeartbeats() throws Exception {
        Client client = new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort())
            .requestedHeartbeat(Duration.ofSeconds(1)));
        try {
            // both ends miss two intervals before they give up: three intervals of silence on either side ends it
            Amqp091Support.await().during(Duration.ofSeconds(3)).atMost(TIMEOUT).until(client::isOpen);
            assertThat(client.metadata("none").get("none").getResponseCode()).isEqualTo(STREAM_DOES_NOT_EXIST);
        } finally {
            client.close();
        }
    }
}
