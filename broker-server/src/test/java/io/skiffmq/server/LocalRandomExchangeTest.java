package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.publishConfirmed;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * RabbitMQ 4's {@code x-local-random} exchange ({@code rabbit_exchange_type_local_random}): each message goes to one
 * of the queues bound to it, at random (on one node every queue is local), whatever its routing key; bindings must
 * have the empty key and lead to classic queues. Declared over AMQP 0-9-1, the AMQP 1.0 management node and the HTTP
 * API; a durable one comes back after a restart and goes through definitions export and import.
 */
@ExtendWith(LeakDetection.class)
class LocalRandomExchangeTest {
    private static final String TYPE = "x-local-random";

    @TempDir
    Path dir;

    private static com.rabbitmq.client.ConnectionFactory factory(RunningBroker broker) {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        return factory;
    }

    private static int ready(Channel channel, String queue) throws Exception {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }

    @Test
    void overAmqp091EachMessageGoesToExactlyOneBoundQueueWhateverItsKey() throws Exception {
        try (RunningBroker broker = RunningBroker.start(); Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("random", TYPE, true);
            List<String> queues = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String queue = channel.queueDeclare().getQueue();
                channel.queueBind(queue, "random", "");
                queues.add(queue);
            }
            for (int i = 0; i < 60; i++) {
                publishConfirmed(connection, "random", List.of("", "a", "b.c").get(i % 3), null, "m" + i);
            }
            int total = 0;
            for (String queue : queues) {
                int count = ready(channel, queue);
                assertThat(count).as("each bound queue gets its share").isPositive();
                total += count;
            }
            assertThat(total).as("each message once").isEqualTo(60);

            // an exchange may lead to it
            channel.exchangeDeclare("in-front", "fanout");
            channel.exchangeBind("random", "in-front", "");
            publishConfirmed(connection, "in-front", "k", null, "through");
            int after = 0;
            for (String queue : queues) {
                after += ready(channel, queue);
            }
            assertThat(after).isEqualTo(61);
        }
    }

    @Test
    void overAmqp091ItRefusesKeyedBindingsBindingsToExchangesAndAnotherType() throws Exception {
        try (RunningBroker broker = RunningBroker.start(); Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("random", TYPE);
            String queue = channel.queueDeclare().getQueue();
            Channel keyed = connection.createChannel();
            channelError(keyed, AMQP.PRECONDITION_FAILED,
                "PRECONDITION_FAILED - Non empty binding 'orders' key not permitted",
                () -> keyed.queueBind(queue, "random", "orders"));
            channel.exchangeDeclare("behind", "fanout");
            Channel toExchange = connection.createChannel();
            channelError(toExchange, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - Destination not found",
                () -> toExchange.exchangeBind("behind", "random", ""));
            Channel retyped = connection.createChannel();
            channelError(retyped, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'type' for "
                + "exchange 'random' in vhost '/': received 'direct' but current is 'x-local-random'",
                () -> retyped.exchangeDeclare("random", "direct"));
            assertThat(channel.isOpen()).isTrue();
            channel.exchangeDeclare("random", TYPE); // the same again: fine
        }
    }

    /**
     * Only classic queues may be bound to it, as {@code rabbit_exchange_type_local_random:validate_binding/2} says:
     * a quorum or a stream queue is refused in its words.
     */
    @Test
    void overAmqp091ItRefusesQuorumAndStreamQueues() throws Exception {
        try (RunningBroker broker = RunningBroker.start(); Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("random", TYPE);
            for (String type : List.of("quorum", "stream")) {
                String queue = unique(type);
                channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", type));
                Channel binding = connection.createChannel();
                channelError(binding, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - Queue type rabbit_" + type
                    + "_queue not valid for this exchange type", () -> binding.queueBind(queue, "random", ""));
            }
            channel.queueBind(channel.queueDeclare().getQueue(), "random", ""); // a classic one is fine
        }
    }

    @Test
    void theAmqp10ManagementNodeDeclaresAndBindsIt() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
                Environment environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                    .port(broker.port()).username("guest").password("guest").environmentBuilder().build();
                com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            Management management = connection.management();
            management.exchange().name("random").type(TYPE).declare();
            String q1 = unique("q1");
            String q2 = unique("q2");
            for (String q : List.of(q1, q2)) {
                management.queue().name(q).declare();
                management.binding().sourceExchange("random").destinationQueue(q).bind();
            }
            assertThatThrownBy(() -> management.binding().sourceExchange("random").destinationQueue(q1).key("k")
                    .bind())
                .hasMessageContaining("400").hasMessageContaining("Non empty binding 'k' key not permitted");

            try (Publisher publisher = connection.publisherBuilder().exchange("random").key("anything").build()) {
                BlockingQueue<Publisher.Status> outcomes = new LinkedBlockingQueue<>();
                for (int i = 0; i < 20; i++) {
                    publisher.publish(publisher.message(bytes("m" + i)), context -> outcomes.add(context.status()));
                }
                for (int i = 0; i < 20; i++) {
                    assertThat(outcomes.poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
                }
            }
            assertThat(management.queueInfo(q1).messageCount() + management.queueInfo(q2).messageCount())
                .isEqualTo(20);
        }
    }

    @Test
    void theHttpApiDeclaresItADurableOneComesBackAfterARestartAndDefinitionsCarryIt() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        Map<String, Object> exported;
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(api.put("/api/exchanges/%2F/random", Map.of("type", TYPE, "durable", true)).status())
                .isEqualTo(201);
            assertThat(api.get("/api/exchanges/%2F/random").map()).containsEntry("type", TYPE);
            assertThat(api.get("/api/overview").map().get("exchange_types")).asList().contains(Map.of("name", TYPE,
                "description", "Picks one random local binding (queue) to route via (to).", "enabled", true));
            assertThat(api.put("/api/queues/%2F/orders", Map.of("durable", true)).status()).isEqualTo(201);
            assertThat(api.post("/api/bindings/%2F/e/random/q/orders", Map.of("routing_key", "k")).status())
                .as("a keyed binding").isEqualTo(400);
            assertThat(api.post("/api/bindings/%2F/e/random/q/orders", Map.of("routing_key", "")).status())
                .isEqualTo(201);
            exported = api.get("/api/definitions").map();
            assertThat(exported.get("exchanges")).asList().contains(Map.of("name", "random", "vhost", "/",
                "type", TYPE, "durable", true, "auto_delete", false, "internal", false, "arguments", Map.of()));
        }
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = factory(broker).newConnection()) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclarePassive("random");
            assertThat(HttpApiClient.guest(broker).get("/api/exchanges/%2F/random").map()).containsEntry("type", TYPE);
            publishConfirmed(connection, "random", "any", null, "after the restart");
            await().atMost(TIMEOUT).until(() -> ready(channel, "orders") == 1);
        }
        try (RunningBroker fresh = RunningBroker.start(); Connection connection = factory(fresh).newConnection()) {
            HttpApiClient api = HttpApiClient.guest(fresh);
            assertThat(api.post("/api/definitions", exported).status()).isEqualTo(204);
            assertThat(api.get("/api/exchanges/%2F/random").map()).containsEntry("type", TYPE);
            publishConfirmed(connection, "random", "any", null, "imported");
            Channel channel = connection.createChannel();
            await().atMost(TIMEOUT).until(() -> ready(channel, "orders") == 1);
        }
    }
}
