package io.skiffmq.server;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the RabbitMQ Java client tests share: one broker per test class ({@link Amqp091Target}: SkiffMQ, or an
 * external RabbitMQ), and per test a fresh connection with one channel open, closed afterwards if the test left it
 * open. A subclass's own {@code @BeforeEach} runs after {@link #connect}.
 */
@ExtendWith(LeakDetection.class)
abstract class Amqp091ClientTest {
    protected static Amqp091Target target;
    protected Connection connection;
    protected Channel channel;

    @BeforeAll
    static void startBroker() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stopBroker() {
        target.close();
    }

    @BeforeEach
    void connect() throws Exception {
        connection = target.factory().newConnection();
        channel = connection.createChannel();
    }

    @AfterEach
    void disconnect() throws Exception {
        if (connection.isOpen()) {
            connection.close();
        }
    }
}
