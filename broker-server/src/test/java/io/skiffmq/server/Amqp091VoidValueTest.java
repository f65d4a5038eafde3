package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.drain;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A void field value (type {@code V}, null to the RabbitMQ Java client) is valid wherever a field table is: in
 * client properties, queue, exchange, binding and consumer arguments, and message headers (nested too). Each is
 * accepted, acted on as RabbitMQ acts on it (a void headers binding argument asks only that the header be there),
 * kept through conversion to AMQP 1.0, dead-lettering and a restart, and shown by the HTTP API as JSON null. Where
 * RabbitMQ checks an argument's type, void is refused as a type ({@link Amqp091ArgumentChecksTest}).
 */
@ExtendWith(LeakDetection.class)
class Amqp091VoidValueTest {
    private static RunningBroker broker;
    private static ConnectionFactory factory;
    private static HttpApiClient http;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setAutomaticRecoveryEnabled(false);
        Map<String, Object> clientProperties = new HashMap<>(factory.getClientProperties());
        clientProperties.put("void-property", null);
        factory.setClientProperties(clientProperties); // for every test
        http = HttpApiClient.guest(broker);
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /** A map with {@code key} holding null (Map.of refuses nulls). */
    private static Map<String, Object> voidEntry(String key) {
        Map<String, Object> map = new HashMap<>();
        map.put(key, null);
        return map;
    }

    @Test
    void clientPropertiesWithVoidValuesConnect() throws Exception {
        Map<String, Object> capabilities = new HashMap<>(Map.of("consumer_cancel_notify", true));
        capabilities.put("connection.blocked", null);
        Map<String, Object> clientProperties = new HashMap<>(factory.getClientProperties());
        clientProperties.put("capabilities", capabilities);
        ConnectionFactory own = factory.clone();
        own.setClientProperties(clientProperties);
        try (Connection connection = own.newConnection(); Channel channel = connection.createChannel()) {
            String queue = channel.queueDeclare().getQueue();
            channel.basicPublish("", queue, null, bytes("round trip"));
            await().atMost(TIMEOUT).until(() -> channel.messageCount(queue) == 1);
        }
    }

    @Test
    void queueAndExchangeArgumentsWithAVoidValueDeclareRedeclareAndShow() throws Exception {
        String queue = unique("void-q");
        String exchange = unique("void-x");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.queueDeclare(queue, true, false, false, voidEntry("x-custom"));
            channel.queueDeclare(queue, true, false, false, voidEntry("x-custom"));
            channel.exchangeDeclare(exchange, "topic", true, false, voidEntry("x-custom"));
            channel.exchangeDeclare(exchange, "topic", true, false, voidEntry("x-custom"));
            channel.queueBind(queue, exchange, "#", voidEntry("x-custom"));
            channel.basicPublish(exchange, "k", null, bytes("routed"));
            await().atMost(TIMEOUT).until(() -> channel.messageCount(queue) == 1);

            HttpApiClient.Answer q = http.get("/api/queues/%2F/" + HttpApiClient.seg(queue));
            assertThat(q.status()).isEqualTo(200);
            assertThat(table(q.map().get("arguments"))).containsEntry("x-custom", null);
            HttpApiClient.Answer x = http.get("/api/exchanges/%2F/" + HttpApiClient.seg(exchange));
            assertThat(x.status()).isEqualTo(200);
            assertThat(table(x.map().get("arguments"))).containsEntry("x-custom", null);
            HttpApiClient.Answer b = http.get("/api/bindings/%2F/e/" + HttpApiClient.seg(exchange) + "/q/"
                + HttpApiClient.seg(queue));
            assertThat(b.status()).isEqualTo(200);
            assertThat(table(b.list().get(0).get("arguments"))).containsEntry("x-custom", null);
            channel.queueDelete(queue);
            channel.exchangeDelete(exchange);
        }
    }

    @Test
    void aVoidHeadersBindingArgumentMatchesAnyValueOfAPresentHeader() throws Exception {
        String queue = unique("void-headers");
        String exchange = unique("void-hx");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.queueDeclare(queue, false, false, true, null);
            channel.exchangeDeclare(exchange, "headers", false, true, null);
            Map<String, Object> arguments = voidEntry("present");
            arguments.put("x-match", "all");
            channel.queueBind(queue, exchange, "", arguments);
            channel.confirmSelect();
            channel.basicPublish(exchange, "", props(voidEntry("present")), bytes("void value"));
            channel.basicPublish(exchange, "", props(Map.of("present", "text")), bytes("string value"));
            channel.basicPublish(exchange, "", props(Map.of("other", "text")), bytes("absent"));
            channel.basicPublish(exchange, "", props(voidEntry("other")), bytes("absent, void other"));
            channel.waitForConfirmsOrDie(5_000);
            assertThat(drain(channel, queue)).containsExactly("void value", "string value");

            String exact = unique("void-exact");
            channel.queueDeclare(exact, false, false, true, null);
            channel.queueBind(exact, exchange, "", Map.of("x-match", "any", "present", "text"));
            channel.basicPublish(exchange, "", props(voidEntry("present")), bytes("void does not equal text"));
            channel.basicPublish(exchange, "", props(Map.of("present", "text")), bytes("equal"));
            channel.waitForConfirmsOrDie(5_000);
            assertThat(drain(channel, exact)).containsExactly("equal");
        }
    }

    @Test
    void aConsumerWithAVoidArgumentConsumes() throws Exception {
        String queue = unique("void-consume");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.queueDeclare(queue, false, false, true, null);
            BlockingQueue<String> got = new ArrayBlockingQueue<>(1);
            channel.basicConsume(queue, true, "", false, false, voidEntry("x-custom"),
                (tag, delivery) -> got.add(Amqp091Support.text(delivery.getBody())), tag -> { });
            channel.basicPublish("", queue, null, bytes("hello"));
            assertThat(got.poll(5, TimeUnit.SECONDS)).isEqualTo("hello");
        }
    }

    @Test
    void voidHeadersReachA091ConsumerAnAmqp10ConsumerAndSurviveDeadLettering() throws Exception {
        String queue = unique("void-msg");
        String dead = unique("void-dead");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel();
             Environment environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                 .port(broker.port()).username("guest").password("guest").environmentBuilder().build();
             com.rabbitmq.client.amqp.Connection amqp10 = environment.connectionBuilder().build()) {
            channel.queueDeclare(dead, false, false, false, null);
            channel.queueDeclare(queue, false, false, false,
                Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", dead));
            channel.confirmSelect();
            channel.basicPublish("", queue, props(headers()), bytes("once"));
            channel.waitForConfirmsOrDie(5_000);

            GetResponse first = channel.basicGet(queue, false);
            assertThat(first.getProps().getHeaders()).containsEntry("v", null).containsEntry("x-v", null)
                .containsEntry("table", voidEntry("n")).containsEntry("array", Arrays.asList(1, null));
            channel.basicReject(first.getEnvelope().getDeliveryTag(), false);

            await().atMost(TIMEOUT).until(() -> channel.messageCount(dead) == 1);
            HttpApiClient.Answer peek = http.post("/api/queues/%2F/" + HttpApiClient.seg(dead) + "/get",
                Map.of("count", 1, "ackmode", "ack_requeue_true", "encoding", "auto"));
            assertThat(peek.status()).isEqualTo(200);
            Map<String, Object> shown = table(table(peek.list().get(0).get("properties")).get("headers"));
            assertThat(shown).containsEntry("v", null).containsEntry("table", voidEntry("n"));

            GetResponse deadLettered = channel.basicGet(dead, false);
            Map<String, Object> headers = deadLettered.getProps().getHeaders();
            assertThat(headers).containsEntry("v", null).containsEntry("x-v", null)
                .containsEntry("table", voidEntry("n")).containsEntry("array", Arrays.asList(1, null))
                .containsKey("x-death");
            channel.basicNack(deadLettered.getEnvelope().getDeliveryTag(), false, true);

            BlockingQueue<Message> got = new ArrayBlockingQueue<>(1);
            com.rabbitmq.client.amqp.Consumer consumer = amqp10.consumerBuilder().queue(dead)
                .messageHandler((context, message) -> {
                    got.add(message);
                    context.accept();
                }).build();
            Message converted = got.poll(5, TimeUnit.SECONDS);
            consumer.close();
            assertThat(converted).isNotNull();
            assertThat(converted.hasProperty("v")).isTrue();
            assertThat(converted.property("v")).isNull();
            assertThat(converted.hasAnnotation("x-v")).isTrue();
            assertThat(converted.annotation("x-v")).isNull();
        }
    }

    @Test
    void durableDefinitionsAndMessagesWithVoidValuesSurviveARestart(@TempDir Path dir) throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        Map<String, Object> binding = voidEntry("present");
        binding.put("x-match", "any");
        try (RunningBroker first = RunningBroker.start(dataDir);
             Connection connection = factoryFor(first).newConnection();
             Channel channel = connection.createChannel()) {
            channel.queueDeclare("void-durable", true, false, false, voidEntry("x-custom"));
            channel.exchangeDeclare("void-durable-x", "headers", true, false, voidEntry("x-custom"));
            channel.queueBind("void-durable", "void-durable-x", "", binding);
            channel.confirmSelect();
            Map<String, Object> headers = headers();
            headers.put("present", null);
            channel.basicPublish("void-durable-x", "", new AMQP.BasicProperties.Builder().deliveryMode(2)
                .headers(headers).build(), bytes("before"));
            channel.waitForConfirmsOrDie(5_000);
        }
        try (RunningBroker second = RunningBroker.start(dataDir);
             Connection connection = factoryFor(second).newConnection();
             Channel channel = connection.createChannel()) {
            channel.queueDeclare("void-durable", true, false, false, voidEntry("x-custom"));
            channel.exchangeDeclare("void-durable-x", "headers", true, false, voidEntry("x-custom"));
            channel.confirmSelect();
            channel.basicPublish("void-durable-x", "", props(voidEntry("present")), bytes("after"));
            channel.waitForConfirmsOrDie(5_000);
            GetResponse before = channel.basicGet("void-durable", true);
            assertThat(before.getProps().getHeaders()).containsEntry("v", null).containsEntry("table", voidEntry("n"));
            assertThat(Amqp091Support.text(channel.basicGet("void-durable", true).getBody()))
                .as("the void binding argument still routes").isEqualTo("after");
        }
    }

    private static ConnectionFactory factoryFor(RunningBroker running) {
        ConnectionFactory other = factory.clone();
        other.setPort(running.port());
        return other;
    }

    /** Headers with void values at the top, in a nested table and in an array. */
    private static Map<String, Object> headers() {
        Map<String, Object> headers = new HashMap<>();
        headers.put("v", null);
        headers.put("x-v", null);
        headers.put("table", voidEntry("n"));
        headers.put("array", new ArrayList<>(Arrays.asList(1, null)));
        return headers;
    }

    private static AMQP.BasicProperties props(Map<String, Object> headers) {
        return new AMQP.BasicProperties.Builder().headers(headers).build();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> table(Object json) {
        return (Map<String, Object>) json;
    }
}
