package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.config.BrokerConfig;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The RabbitMQ feature level ({@code rabbitmq-version}) as clients see it: the same on every protocol, and what the
 * RabbitMQ AMQP 1.0 Java client turns on by it (docs/server.md, "The feature level").
 */
@ExtendWith(LeakDetection.class)
class FeatureLevelTest {

    private static Environment environment(RunningBroker broker) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
    }

    @Test
    void everyProtocolTellsTheSameLevel() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
                Environment environment = environment(broker);
                Connection connection = environment.connectionBuilder().build()) {
            assertThat(connection.connectionInfo().brokerVersion()).isEqualTo(BrokerConfig.RABBITMQ_VERSION).isEqualTo("4.0.9");
            com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port());
            try (com.rabbitmq.client.Connection amqp091 = factory.newConnection()) {
                assertThat(amqp091.getServerProperties().get("version")).hasToString(BrokerConfig.RABBITMQ_VERSION);
            }
        }
    }

    /** Filter expressions (on streams, which we do not have) are a 4.1 feature: the client refuses them below it. */
    @Test
    void theClientTurnsOnWhatTheLevelSays() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
                Environment environment = environment(broker);
                Connection connection = environment.connectionBuilder().build()) {
            assertThatThrownBy(() -> connection.consumerBuilder().queue("q").stream().filter())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("requires at least RabbitMQ 4.1.0");
        }
        try (RunningBroker broker = RunningBroker.start("rabbitmq-version=4.1.0");
                Environment environment = environment(broker);
                Connection connection = environment.connectionBuilder().build()) {
            assertThat(connection.connectionInfo().brokerVersion()).isEqualTo("4.1.0");
            assertThat(connection.consumerBuilder().queue("q").stream().filter()).as("offered at 4.1.0").isNotNull();
        }
    }

    /**
     * What 4.0.3 brought (the client's own test, {@code publisherSendingShouldThrowWhenPublishingToNonExisting
     * ExchangeWithToProperty}): a message whose {@code to} names no exchange is rejected, and the anonymous
     * publisher goes on.
     */
    @Test
    void publisherErrorsWithToLeaveThePublisherWorking() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
                Environment environment = environment(broker);
                Connection connection = environment.connectionBuilder().build()) {
            connection.management().queue().name("level-q").exclusive(true).declare();
            Publisher publisher = connection.publisherBuilder().build();
            assertThat(outcome(publisher, publisher.message(bytes("to nowhere")).toAddress().exchange("missing")
                .message())).isEqualTo(Publisher.Status.REJECTED);
            assertThat(outcome(publisher, publisher.message(bytes("to the queue")).toAddress().queue("level-q")
                .message())).isEqualTo(Publisher.Status.ACCEPTED);
            assertThat(connection.management().queueInfo("level-q").messageCount()).isEqualTo(1);
        }
    }

    @Test
    void aLevelThatIsNoVersionStopsTheStart() {
        assertThatThrownBy(() -> BrokerConfig.defaults().with("rabbitmq-version", "4.1"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rabbitmq-version must be a version");
        assertThat(BrokerConfig.defaults().with("rabbitmq-version", "4.1.0-rc.1").rabbitmqVersion()).isEqualTo("4.1.0-rc.1");
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static Publisher.Status outcome(Publisher publisher, com.rabbitmq.client.amqp.Message message)
            throws InterruptedException {
        BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
        publisher.publish(message, context -> outcome.add(context.status()));
        return outcome.poll(10, TimeUnit.SECONDS);
    }
}
