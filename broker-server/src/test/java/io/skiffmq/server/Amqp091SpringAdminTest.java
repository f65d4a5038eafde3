package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ShutdownSignalException;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.core.AnonymousQueue;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.ExchangeBuilder;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.HeadersExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.core.TopicExchange;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.support.GenericApplicationContext;

/**
 * Spring AMQP's {@link RabbitAdmin}: declarations from an application context (each exchange type, an alternate
 * and an internal exchange, queues with {@code x-} arguments, queue and exchange-to-exchange bindings, a headers
 * binding), each checked by routing a message through it; passive declares for message and consumer counts;
 * server-named queues; purge; and the channel errors RabbitMQ raises for an inequivalent redeclare or a
 * conditional delete, after which the connection carries on.
 */
@ExtendWith(LeakDetection.class)
class Amqp091SpringAdminTest {
    private static Amqp091Target target;
    /** The publishers' factory, with correlated confirms: no channel error ever closes one of its channels. */
    private static CachingConnectionFactory connectionFactory;
    /**
     * The admins' factory, without confirms, where the expected channel errors happen. A confirm channel closed by one
     * fails Spring's wait for its confirms when it goes back to the cache ("PublisherCallbackChannel is closed"),
     * which then reached a later publish of the test now and then.
     */
    private static CachingConnectionFactory adminFactory;
    private static RabbitAdmin admin;
    private static RabbitTemplate template;
    private final List<String> queues = new ArrayList<>();
    private final List<String> exchanges = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
        connectionFactory = Amqp091Spring.connectionFactory(target, ConfirmType.CORRELATED, false);
        adminFactory = Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        admin = new RabbitAdmin(adminFactory);
        template = new RabbitTemplate(connectionFactory);
    }

    @AfterAll
    static void stop() {
        if (connectionFactory != null) {
            connectionFactory.destroy();
        }
        if (adminFactory != null) {
            adminFactory.destroy();
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, exchanges);
    }

    private String queueName(String prefix) {
        String name = Amqp091Spring.unique(prefix);
        queues.add(name);
        return name;
    }

    private String exchangeName(String prefix) {
        String name = Amqp091Spring.unique(prefix);
        exchanges.add(name);
        return name;
    }

    /** Publishes with a correlated confirm and waits for the broker's ack. */
    private static void publishConfirmed(String exchange, String routingKey, Message message) throws Exception {
        CorrelationData correlation = new CorrelationData();
        template.send(exchange, routingKey, message, correlation);
        assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).as("confirm of %s/%s", exchange, routingKey)
            .isTrue();
    }

    private static Message text(String body) {
        return MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    private static void awaitReady(String queue, int expected) {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            QueueInformation info = admin.getQueueInfo(queue);
            assertThat(info).as(queue).isNotNull();
            assertThat(info.getMessageCount()).as("ready messages in %s", queue).isEqualTo(expected);
        });
    }

    @Test
    void declaresEveryExchangeTypeQueuesWithArgumentsAndBindingsFromTheContextAndRoutesThroughThem() throws Exception {
        FanoutExchange alternate = new FanoutExchange(exchangeName("spring-alt"), false, false);
        DirectExchange direct = (DirectExchange) ExchangeBuilder.directExchange(exchangeName("spring-direct"))
            .durable(true).alternate(alternate.getName()).build();
        FanoutExchange fanout = new FanoutExchange(exchangeName("spring-fanout"), false, false);
        TopicExchange topic = new TopicExchange(exchangeName("spring-topic"), false, false);
        HeadersExchange headers = new HeadersExchange(exchangeName("spring-headers"), false, false);
        Exchange internal = ExchangeBuilder.topicExchange(exchangeName("spring-internal")).durable(false).internal()
            .build();
        TopicExchange source = new TopicExchange(exchangeName("spring-e2e-source"), false, false);

        Queue onDirect = QueueBuilder.durable(queueName("spring-q-direct")).ttl(60_000).maxLength(1_000L)
            .deadLetterExchange(alternate.getName()).deadLetterRoutingKey("dead").classic().build();
        Queue onAlternate = QueueBuilder.nonDurable(queueName("spring-q-alt")).singleActiveConsumer().build();
        Queue onFanout1 = QueueBuilder.nonDurable(queueName("spring-q-fanout1")).build();
        Queue onFanout2 = QueueBuilder.nonDurable(queueName("spring-q-fanout2")).expires(600_000).build();
        Queue onTopic = QueueBuilder.nonDurable(queueName("spring-q-topic")).maxLengthBytes(1_000_000).build();
        Queue onHeaders = QueueBuilder.nonDurable(queueName("spring-q-headers")).build();
        Queue onInternal = QueueBuilder.nonDurable(queueName("spring-q-internal")).build();
        AnonymousQueue anonymous = new AnonymousQueue();

        List<Binding> bindings = List.of(
            BindingBuilder.bind(onDirect).to(direct).with("orders"),
            BindingBuilder.bind(onAlternate).to(alternate),
            BindingBuilder.bind(onFanout1).to(fanout),
            BindingBuilder.bind(onFanout2).to(fanout),
            BindingBuilder.bind(onTopic).to(topic).with("orders.*.eu"),
            BindingBuilder.bind(onHeaders).to(headers).whereAll(Map.of("format", "pdf", "type", "report")).match(),
            BindingBuilder.bind(onInternal).to((TopicExchange) internal).with("#"),
            // exchange to exchange: source -> internal (an internal exchange takes messages only from exchanges)
            BindingBuilder.bind(internal).to(source).with("audit.#"),
            BindingBuilder.bind(anonymous).to(fanout));

        try (GenericApplicationContext context = new GenericApplicationContext()) {
            RabbitAdmin contextAdmin = new RabbitAdmin(adminFactory);
            context.registerBean("declarables", Declarables.class, () -> {
                List<Object> all = new ArrayList<>(List.of(alternate, direct, fanout, topic, headers, internal, source,
                    onDirect, onAlternate, onFanout1, onFanout2, onTopic, onHeaders, onInternal, anonymous));
                all.addAll(bindings);
                return new Declarables(all.stream().map(org.springframework.amqp.core.Declarable.class::cast)
                    .toList());
            });
            context.refresh();
            contextAdmin.setApplicationContext(context);
            contextAdmin.afterPropertiesSet();
            contextAdmin.initialize();
        }
        // exclusive to the admins' connection: it goes with it, and no other connection may delete it
        assertThat(anonymous.getName()).startsWith("spring.gen-");

        publishConfirmed(direct.getName(), "orders", text("direct"));
        publishConfirmed(direct.getName(), "nobody-binds-this", text("to the alternate"));
        publishConfirmed(fanout.getName(), "ignored", text("fanout"));
        publishConfirmed(topic.getName(), "orders.new.eu", text("topic match"));
        publishConfirmed(topic.getName(), "orders.new.us", text("topic miss"));
        publishConfirmed(topic.getName(), "orders.eu", text("topic miss, one word short"));
        publishConfirmed(headers.getName(), "", MessageBuilder.withBody(new byte[] {1}).setHeader("format", "pdf")
            .setHeader("type", "report").setHeader("extra", 42).build());
        publishConfirmed(headers.getName(), "", MessageBuilder.withBody(new byte[] {2}).setHeader("format", "pdf")
            .build());
        publishConfirmed(source.getName(), "audit.login", text("through an exchange binding"));
        publishConfirmed(source.getName(), "billing.login", text("not audit"));
        BlockingQueue<ShutdownSignalException> channelCloses = new LinkedBlockingQueue<>();
        try (com.rabbitmq.client.Connection plain = target.factory().newConnection()) {
            com.rabbitmq.client.Channel channel = plain.createChannel();
            channel.confirmSelect();
            channel.addShutdownListener(channelCloses::add);
            channel.basicPublish(internal.getName(), "audit.direct", null,
                "straight to an internal exchange".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> channel.waitForConfirmsOrDie(10_000))
                .as("a publish to an internal exchange is never confirmed: its channel is closed")
                .isInstanceOf(ShutdownSignalException.class);
        }
        ShutdownSignalException closed = channelCloses.poll(10, TimeUnit.SECONDS);
        assertThat(closed).isNotNull();
        assertThat(closed.isHardError()).as("a channel error").isFalse();
        assertThat(((AMQP.Channel.Close) closed.getReason()).getReplyCode()).isEqualTo(403);
        assertThat(closed.getMessage()).contains("ACCESS_REFUSED");

        awaitReady(onDirect.getName(), 1);
        awaitReady(onAlternate.getName(), 1);
        awaitReady(onFanout1.getName(), 1);
        awaitReady(onFanout2.getName(), 1);
        awaitReady(anonymous.getName(), 1);
        awaitReady(onTopic.getName(), 1);
        awaitReady(onHeaders.getName(), 1);
        awaitReady(onInternal.getName(), 1);
        assertThat(template.receive(onAlternate.getName()).getBody()).asString(StandardCharsets.UTF_8)
            .isEqualTo("to the alternate");
        assertThat(template.receive(onTopic.getName()).getBody()).asString(StandardCharsets.UTF_8)
            .isEqualTo("topic match");
        assertThat(template.receive(onHeaders.getName()).getBody()).containsExactly(1);
        assertThat(template.receive(onInternal.getName()).getBody()).asString(StandardCharsets.UTF_8)
            .isEqualTo("through an exchange binding");

        // unbinding stops the routing
        admin.removeBinding(BindingBuilder.bind(onFanout1).to(fanout));
        publishConfirmed(fanout.getName(), "", text("after unbind"));
        awaitReady(onFanout2.getName(), 2);
        assertThat(admin.getQueueInfo(onFanout1.getName()).getMessageCount()).isEqualTo(1);
    }

    @Test
    void passiveDeclaresCountReadyMessagesAndConsumersAndAMissingQueueIsNull() throws Exception {
        String queue = queueName("spring-counts");
        assertThat(admin.declareQueue(new Queue(queue, false, false, false))).isEqualTo(queue);
        for (int i = 0; i < 5; i++) {
            publishConfirmed("", queue, text("m-" + i));
        }
        Properties properties = admin.getQueueProperties(queue);
        assertThat(properties).containsEntry(RabbitAdmin.QUEUE_NAME, queue)
            .containsEntry(RabbitAdmin.QUEUE_MESSAGE_COUNT, 5L).containsEntry(RabbitAdmin.QUEUE_CONSUMER_COUNT, 0);

        // one consumer holding one unacknowledged message: declare-ok counts ready messages only
        try (com.rabbitmq.client.Connection connection = target.factory().newConnection("holder")) {
            com.rabbitmq.client.Channel channel = connection.createChannel();
            channel.basicQos(1);
            CountDownLatch delivered = new CountDownLatch(1);
            channel.basicConsume(queue, false, (tag, delivery) -> delivered.countDown(), tag -> { });
            assertThat(delivered.await(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                QueueInformation info = admin.getQueueInfo(queue);
                assertThat(info.getConsumerCount()).isEqualTo(1);
                assertThat(info.getMessageCount()).isEqualTo(4);
            });
        }
        // the holder's connection closed: its unacknowledged message is ready again
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            QueueInformation info = admin.getQueueInfo(queue);
            assertThat(info.getConsumerCount()).isZero();
            assertThat(info.getMessageCount()).isEqualTo(5);
        });

        assertThat(admin.getQueueInfo(Amqp091Spring.unique("spring-missing"))).isNull();
        assertThat(admin.getQueueProperties(Amqp091Spring.unique("spring-missing"))).isNull();
        // the 404 closed a channel only; the connection goes on
        assertThat(admin.purgeQueue(queue)).isEqualTo(5);
        assertThat(admin.getQueueInfo(queue).getMessageCount()).isZero();

        Queue serverNamed = admin.declareQueue();
        assertThat(serverNamed.getName()).startsWith("amq.gen-");
        assertThat(serverNamed.isExclusive()).isTrue();
        assertThat(admin.getQueueInfo(serverNamed.getName())).isNotNull();
    }

    @Test
    void inequivalentRedeclaresAndConditionalDeletesAreChannelErrorsAndTheConnectionCarriesOn() throws Exception {
        String queue = queueName("spring-ttl");
        admin.declareQueue(QueueBuilder.nonDurable(queue).ttl(1_000).build());
        admin.declareQueue(QueueBuilder.nonDurable(queue).ttl(1_000).build()); // equivalent: fine
        assertThatThrownBy(() -> admin.declareQueue(QueueBuilder.nonDurable(queue).ttl(2_000).build()))
            .isInstanceOf(AmqpIOException.class)
            .hasStackTraceContaining("PRECONDITION_FAILED").hasStackTraceContaining("x-message-ttl");
        assertThatThrownBy(() -> admin.declareQueue(QueueBuilder.durable(queue).ttl(1_000).build()))
            .isInstanceOf(AmqpIOException.class).hasStackTraceContaining("PRECONDITION_FAILED")
            .hasStackTraceContaining("durable");

        String exchange = exchangeName("spring-typed");
        admin.declareExchange(new DirectExchange(exchange, false, false));
        assertThatThrownBy(() -> admin.declareExchange(new TopicExchange(exchange, false, false)))
            .isInstanceOf(AmqpIOException.class).hasStackTraceContaining("PRECONDITION_FAILED");

        admin.declareBinding(BindingBuilder.bind(new Queue(queue)).to(new DirectExchange(exchange)).with("k"));
        publishConfirmed(exchange, "k", text("keeps the queue non-empty"));
        awaitReady(queue, 1);
        assertThatThrownBy(() -> admin.deleteQueue(queue, false, true))
            .hasStackTraceContaining("PRECONDITION_FAILED");
        assertThat(admin.getQueueInfo(queue)).as("a refused delete leaves the queue").isNotNull();
        assertThatCode(() -> admin.deleteQueue(Amqp091Spring.unique("spring-missing"), false, false))
            .as("RabbitMQ deletes a missing queue without complaint").doesNotThrowAnyException();

        assertThat(admin.deleteQueue(queue)).isTrue();
        assertThat(admin.getQueueInfo(queue)).isNull();
        assertThat(admin.deleteExchange(exchange)).isTrue();
        assertThatThrownBy(() -> new RabbitTemplate(adminFactory).execute(channel -> channel.exchangeDeclarePassive(
            exchange)))
            .hasStackTraceContaining("NOT_FOUND");
    }
}
