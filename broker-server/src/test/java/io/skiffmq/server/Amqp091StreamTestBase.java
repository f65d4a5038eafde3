package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

/**
 * What the 0-9-1 stream and quorum queue tests share: typed arguments, refused declarations, and unique names deleted
 * after each test.
 */
abstract class Amqp091StreamTestBase extends Amqp091ClientTest {
    private final List<String> declared = new ArrayList<>();

    @AfterEach
    void deleteStreams() throws Exception {
        try (Connection cleaner = target.factory().newConnection("cleanup"); Channel c = cleaner.createChannel()) {
            for (String name : declared) {
                c.queueDelete(name);
            }
        }
    }

    /** A unique name, deleted after the test. */
    String name(String prefix) {
        String name = unique(prefix);
        declared.add(name);
        return name;
    }

    /** {@code x-queue-type: stream} and the rest, in that order. */
    static Map<String, Object> stream(Object... keysAndValues) {
        return typed("stream", keysAndValues);
    }

    /** A declaration that must be refused with 406 and {@code text}, on a fresh channel: nothing is declared. */
    void refused(String queue, boolean durable, boolean exclusive, boolean autoDelete,
            Map<String, Object> arguments, String text) throws Exception {
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - " + text,
            () -> channel.queueDeclare(queue, durable, exclusive, autoDelete, arguments));
        assertThat(queueExists(connection, queue)).as(text).isFalse();
    }

    /** {@code x-queue-type: type} and the rest, in that order. */
    static Map<String, Object> typed(String type, Object... keysAndValues) {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("x-queue-type", type);
        for (int i = 0; i < keysAndValues.length; i += 2) {
            arguments.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return arguments;
    }
}
