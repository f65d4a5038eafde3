package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Streams declared the other ways RabbitMQ 4 declares them: its AMQP 1.0 client's {@code /management} node (its
 * {@code stream()} builder: {@code x-queue-type} and the stream's arguments), the HTTP API's {@code PUT
 * /api/queues} and a definitions import; messages published over AMQP 1.0 are read over 0-9-1 with their offsets.
 */
@ExtendWith(LeakDetection.class)
class StreamManagementTest {
    private static RunningBroker broker;
    private static Environment environment;
    private static Connection connection;
    private static com.rabbitmq.client.Connection amqp091;
    private static HttpApiClient http;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
        connection = environment.connectionBuilder().build();
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        amqp091 = factory.newConnection();
        http = new HttpApiClient(broker.managementPort(), "guest", "guest");
    }

    @AfterAll
    static void stop() throws Exception {
        amqp091.close();
        connection.close();
        environment.close();
        broker.close();
    }

    private static void publish(Publisher publisher, String body) throws InterruptedException {
        CountDownLatch settled = new CountDownLatch(1);
        Publisher.Status[] status = new Publisher.Status[1];
        publisher.publish(publisher.message(body.getBytes(StandardCharsets.UTF_8)), context -> {
            status[0] = context.status();
            settled.countDown();
        });
        assertThat(settled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(status[0]).isEqualTo(Publisher.Status.ACCEPTED);
    }

    /** Reads the stream from the first over 0-9-1: the bodies, checking the offsets. */
    private static List<String> read091(String stream, int count) throws Exception {
        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        channel.basicQos(100);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
        channel.basicConsume(stream, false, Map.of("x-stream-offset", "first"), recorder);
        List<com.rabbitmq.client.Delivery> got = recorder.awaitExactly(count);
        for (int i = 0; i < count; i++) {
            assertThat(got.get(i).getProperties().getHeaders()).containsEntry("x-stream-offset", (long) i);
            assertThat(got.get(i).getEnvelope().getExchange()).isEmpty();
            assertThat(got.get(i).getEnvelope().getRoutingKey()).as("the stream's name").isEqualTo(stream);
        }
        channel.close();
        return recorder.bodies();
    }

    @Test
    void theAmqp10ClientDeclaresAStreamThroughManagementAndPublishesToIt() throws Exception {
        Management management = connection.management();
        management.queue().name("amqp-stream").stream().maxAge(Duration.ofDays(2)).maxSegmentSizeBytes(
            com.rabbitmq.client.amqp.ByteCapacity.MB(50)).initialMemberCount(1).queue()
            .argument("x-stream-filter-size-bytes", 32).declare();
        Management.QueueInfo info = management.queueInfo("amqp-stream");
        assertThat(info.type()).isEqualTo(Management.QueueType.STREAM);
        assertThat(info.arguments()).containsEntry("x-queue-type", "stream").containsEntry("x-max-age", "172800s");
        Publisher publisher = connection.publisherBuilder().queue("amqp-stream").build();
        for (int i = 0; i < 3; i++) {
            publish(publisher, "m" + i);
        }
        publisher.close();
        assertThat(management.queueInfo("amqp-stream").messageCount()).isEqualTo(3);
        assertThat(read091("amqp-stream", 3)).containsExactly("m0", "m1", "m2");

        // a plain AMQP 1.0 consumer (no offset filter) reads from the next message on, as RabbitMQ's default
        List<String> received = new CopyOnWriteArrayList<>();
        Consumer consumer = connection.consumerBuilder().queue("amqp-stream").messageHandler((context, message) -> {
            received.add(new String(message.body(), StandardCharsets.UTF_8));
            context.accept();
        }).build();
        Publisher later = connection.publisherBuilder().queue("amqp-stream").build();
        publish(later, "m3");
        await().atMost(TIMEOUT).until(() -> received.contains("m3"));
        assertThat(received).containsExactly("m3");
        later.close();
        consumer.close();

        assertThatThrownBy(() -> management.queue().name("amqp-stream").stream().maxAge(Duration.ofDays(3))
            .queue().declare()).hasMessageContaining("409");
        assertThatThrownBy(() -> management.queuePurge("amqp-stream"))
            .hasMessageContaining("purge not supported by queue 'amqp-stream' in vhost '/'");
        management.queueDelete("amqp-stream");
        assertThat(broker.vhost("/").queue("amqp-stream")).isNull();
    }

    @Test
    void managementRefusesWhatAStreamCannotBeAsRabbitMqDoes() {
        Management management = connection.management();
        // the arguments first (409, as rabbit_amqqueue's checks), then the stream's own refusals (400)
        assertThatThrownBy(() -> management.queue().name("bad-stream").type(Management.QueueType.STREAM)
            .argument("x-max-length", 10).declare())
            .hasMessageContaining("invalid arg 'x-max-length' for queue 'bad-stream' in vhost '/' of queue type "
                + "rabbit_stream_queue");
        assertThatThrownBy(() -> management.queue().name("bad-stream").type(Management.QueueType.STREAM)
            .exclusive(true).declare())
            .hasMessageContaining("invalid property 'exclusive-owner' for queue 'bad-stream' in vhost '/'");
        assertThat(broker.vhost("/").queue("bad-stream")).isNull();
    }

    @Test
    void theHttpApiDeclaresAStreamAndShowsIt() throws Exception {
        assertThat(http.put("/api/queues/%2F/http-stream", "{\"durable\":true,\"arguments\":"
            + "{\"x-queue-type\":\"stream\",\"x-max-length-bytes\":1000000}}").status()).isEqualTo(201);
        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        channel.confirmSelect();
        channel.basicPublish("", "http-stream", null, "one".getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        channel.close();
        Map<String, Object> shown = http.get("/api/queues/%2F/http-stream").map();
        assertThat(shown).containsEntry("type", "stream").containsEntry("messages", 1).containsEntry("messages_ready",
            1).containsEntry("committed_offset", 0).containsEntry("first_offset", 0);
        assertThat(shown.get("segments")).isEqualTo(1);
        assertThat(http.put("/api/queues/%2F/http-stream-bad", "{\"durable\":false,\"arguments\":"
            + "{\"x-queue-type\":\"stream\"}}").status()).isEqualTo(400);
        assertThat(http.delete("/api/queues/%2F/http-stream").status()).isEqualTo(204);
    }

    @Test
    void definitionsExportAndImportAStream() throws Exception {
        amqp091.createChannel().queueDeclare("defs-stream", true, false, false, Map.of("x-queue-type", "stream",
            "x-max-age", "1D"));
        String exported = http.get("/api/definitions").raw().body();
        assertThat(exported).contains("\"defs-stream\"").contains("\"x-queue-type\":\"stream\"");
        assertThat(http.delete("/api/queues/%2F/defs-stream").status()).isEqualTo(204);
        assertThat(http.post("/api/definitions", exported).status()).isIn(200, 201, 204);
        assertThat(broker.vhost("/").queue("defs-stream").type().alias()).isEqualTo("stream");
        assertThat(broker.vhost("/").queue("defs-stream").arguments()).containsEntry("x-max-age", "1D");
        http.delete("/api/queues/%2F/defs-stream");
    }
}
