package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

/** What the 0-9-1 stream tests share: stream arguments, and unique names deleted after each test. */
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
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("x-queue-type", "stream");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            arguments.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return arguments;
    }
}
