package io.skiffmq.server;

import com.rabbitmq.stream.Environment;
import io.skiffmq.codec.testing.LeakDetection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the stream protocol's end-to-end test classes share: a broker with its default settings and a stream client
 * environment on it ({@link StreamClients#environment}), for the class, with the leak detector on. A class that
 * needs more sets it up in its own {@code @BeforeAll}, which runs after this one's.
 */
@ExtendWith(LeakDetection.class)
abstract class StreamProtocolTestBase {
    static RunningBroker broker;
    static Environment environment;

    @BeforeAll
    static void startBrokerAndEnvironment() throws Exception {
        broker = RunningBroker.start();
        environment = StreamClients.environment(broker);
    }

    @AfterAll
    static void stopEnvironmentAndBroker() {
        if (environment != null) {
            environment.close();
            environment = null;
        }
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }
}
