package io.skiffmq.server;

import static io.skiffmq.server.Amqp091StreamTestBase.stream;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.stream.StreamQueue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streams across a clean restart on the same data directory: the stream with its arguments, its messages at their
 * offsets, and the next offset going on from where it was; a deleted stream's log is gone from the disk.
 */
@ExtendWith(LeakDetection.class)
class StreamRestartTest {
    @TempDir
    Path dir;

    private static ConnectionFactory factory(RunningBroker broker) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    private static void publish(Connection connection, String stream, int from, int count) throws Exception {
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int i = from; i < from + count; i++) {
                channel.basicPublish("", stream, null, bytes("m" + i));
            }
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        }
    }

    private static List<String> readAll(Connection connection, String stream, int count) throws Exception {
        Channel channel = connection.createChannel();
        channel.basicQos(100);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
        channel.basicConsume(stream, false, Map.of("x-stream-offset", "first"), recorder);
        List<com.rabbitmq.client.Delivery> got = recorder.awaitExactly(count);
        assertThat(got.stream().map(d -> (Long) d.getProperties().getHeaders().get("x-stream-offset")))
            .isEqualTo(LongStream.range(0, count).boxed().toList());
        channel.close();
        return recorder.bodies();
    }

    @Test
    void aStreamItsArgumentsAndItsMessagesSurviveARestart() throws Exception {
        String data = "data-dir=" + dir.resolve("data");
        Map<String, Object> arguments = stream("x-stream-max-segment-size-bytes", 1, "x-max-age", "7D");
        try (RunningBroker broker = RunningBroker.start(data);
                Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("events", true, false, false, arguments);
            channel.queueDeclare("gone", true, false, false, stream());
            for (int batch = 0; batch < 3; batch++) {
                publish(connection, "events", 10 * batch, 10);
            }
            publish(connection, "gone", 0, 1);
            channel.queueDelete("gone");
        }
        try (RunningBroker broker = RunningBroker.start(data);
                Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            assertThat(channel.queueDeclare("events", true, false, false, arguments).getMessageCount()).isEqualTo(30);
            channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'x-max-age'",
                () -> channel.queueDeclare("events", true, false, false, stream("x-stream-max-segment-size-bytes", 1,
                    "x-max-age", "1D")));
            StreamQueue events = (StreamQueue) broker.vhost("/").queue("events");
            assertThat(events.streamArguments().maxAgeMillis()).isEqualTo(7L * 24 * 3_600_000);
            assertThat(events.store().segmentCount()).isGreaterThanOrEqualTo(3);
            assertThat(broker.vhost("/").queue("gone")).isNull();
            try (var streams = Files.list(broker.dataDir().resolve("vhosts").resolve("%2F").resolve("streams"))) {
                assertThat(streams.toList()).as("the deleted stream's log went with it").hasSize(1);
            }
            assertThat(readAll(connection, "events", 30)).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, 30).mapToObj(i -> "m" + i).toList());
            publish(connection, "events", 30, 1);
            assertThat(events.store().committedOffset()).as("on from the next offset").isEqualTo(30);
            assertThat(readAll(connection, "events", 31)).endsWith("m30");
        }
    }
}
