package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.skiffmq.codec.testing.LeakDetection;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.transaction.RabbitTransactionManager;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring AMQP's {@link RabbitTemplate}: correlated publisher confirms (every future acked, the callback once per
 * message), mandatory returns (312 NO_ROUTE, returned before the message's confirm), a nack from a queue that
 * refuses a message, properties and headers of every type through {@code basic.get}, the JSON converter Spring AMQP
 * 4 recommends round-tripping a record, and a channel-transacted template (commit, rollback, commit per send).
 */
@ExtendWith(LeakDetection.class)
class Amqp091SpringTemplateTest {
    private static Amqp091Target target;
    private static CachingConnectionFactory confirming;
    private static CachingConnectionFactory plain;
    private static RabbitAdmin admin;
    private final List<String> queues = new ArrayList<>();

    /** A record for the JSON round trip (Jackson 3 reads records through their canonical constructor). */
    record Order(String id, int quantity, BigDecimal price, List<String> tags, Map<String, Integer> stock) {
    }

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
        confirming = Amqp091Spring.connectionFactory(target, ConfirmType.CORRELATED, true);
        plain = Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        admin = new RabbitAdmin(plain);
    }

    @AfterAll
    static void stop() {
        for (CachingConnectionFactory factory : new CachingConnectionFactory[] {confirming, plain}) {
            if (factory != null) {
                factory.destroy();
            }
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, List.of());
    }

    private String declareQueue(QueueBuilder builder) {
        String name = admin.declareQueue(builder.build());
        queues.add(name);
        return name;
    }

    private static Message text(String body) {
        return MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    @Test
    void correlatedConfirmsAckEveryMessageOnceAndTheQueueHoldsThemAll() throws Exception {
        String queue = declareQueue(QueueBuilder.durable(Amqp091Spring.unique("spring-confirms")));
        RabbitTemplate template = new RabbitTemplate(confirming);
        Set<String> confirmedIds = ConcurrentHashMap.newKeySet();
        BlockingQueue<String> duplicates = new LinkedBlockingQueue<>();
        template.setConfirmCallback((correlation, ack, cause) -> {
            if (!ack || !confirmedIds.add(correlation.getId())) {
                duplicates.add(correlation.getId() + " ack=" + ack + " cause=" + cause);
            }
        });
        int count = 500;
        List<CorrelationData> correlations = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            CorrelationData correlation = new CorrelationData("c-" + i);
            correlations.add(correlation);
            Message message = MessageBuilder.withBody(("m-" + i).getBytes(StandardCharsets.UTF_8))
                .setDeliveryMode(i % 2 == 0 ? MessageDeliveryMode.PERSISTENT : MessageDeliveryMode.NON_PERSISTENT)
                .build();
            template.send("", queue, message, correlation);
        }
        CompletableFuture.allOf(correlations.stream().map(CorrelationData::getFuture)
            .toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        for (CorrelationData correlation : correlations) {
            CorrelationData.Confirm confirm = correlation.getFuture().get();
            assertThat(confirm.ack()).as(correlation.getId()).isTrue();
            assertThat(correlation.getReturned()).isNull();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> confirmedIds.size() == count);
        assertThat(duplicates).isEmpty();
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(count, 0);
    }

    @Test
    void mandatoryUnroutableIsReturnedWithNoRouteBeforeItsConfirm() throws Exception {
        RabbitTemplate template = new RabbitTemplate(confirming);
        template.setMandatory(true);
        BlockingQueue<ReturnedMessage> returns = new LinkedBlockingQueue<>();
        template.setReturnsCallback(returns::add);

        String nowhere = Amqp091Spring.unique("spring-nowhere");
        CorrelationData toExchange = new CorrelationData("to-amq.direct");
        template.send("amq.direct", nowhere, text("unroutable 1"), toExchange);
        CorrelationData toDefault = new CorrelationData("to-default");
        template.send("", nowhere, text("unroutable 2"), toDefault);

        for (CorrelationData correlation : List.of(toExchange, toDefault)) {
            // RabbitMQ confirms an unroutable message (ack, not nack) after basic.return: Spring has the return by then
            assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).as(correlation.getId()).isTrue();
            ReturnedMessage returned = correlation.getReturned();
            assertThat(returned).as("returned before the confirm: " + correlation.getId()).isNotNull();
            assertThat(returned.getReplyCode()).isEqualTo(312);
            assertThat(returned.getReplyText()).isEqualTo("NO_ROUTE");
            assertThat(returned.getRoutingKey()).isEqualTo(nowhere);
        }
        ReturnedMessage first = returns.poll(10, TimeUnit.SECONDS);
        ReturnedMessage second = returns.poll(10, TimeUnit.SECONDS);
        assertThat(List.of(first.getExchange(), second.getExchange())).containsExactly("amq.direct", "");
        assertThat(first.getMessage().getBody()).asString(StandardCharsets.UTF_8).isEqualTo("unroutable 1");
        assertThat(second.getMessage().getBody()).asString(StandardCharsets.UTF_8).isEqualTo("unroutable 2");
        assertThat(returns).isEmpty();

        // routable: confirmed, not returned
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-routable")));
        CorrelationData routed = new CorrelationData("routed");
        template.send("", queue, text("routable"), routed);
        assertThat(routed.getFuture().get(10, TimeUnit.SECONDS).ack()).isTrue();
        assertThat(routed.getReturned()).isNull();
        assertThat(returns.poll(200, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aQueueThatRefusesAMessageNacksIt() throws Exception {
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-full")).maxLength(1L)
            .overflow(QueueBuilder.Overflow.rejectPublish));
        RabbitTemplate template = new RabbitTemplate(confirming);
        CorrelationData first = new CorrelationData("first");
        template.send("", queue, text("fits"), first);
        assertThat(first.getFuture().get(10, TimeUnit.SECONDS).ack()).isTrue();
        CorrelationData second = new CorrelationData("second");
        template.send("", queue, text("does not fit"), second);
        assertThat(second.getFuture().get(10, TimeUnit.SECONDS).ack()).as("x-overflow reject-publish nacks").isFalse();
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(1, 0);
    }

    @Test
    void propertiesAndHeadersOfEveryTypeComeBackThroughBasicGet() throws Exception {
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-props")));
        RabbitTemplate template = new RabbitTemplate(confirming);
        Date timestamp = new Date(1_700_000_000_000L); // AMQP timestamps are whole seconds
        Map<String, Object> nested = Map.of("inner", "value", "n", 7);
        Message message = MessageBuilder.withBody("with properties".getBytes(StandardCharsets.UTF_8))
            .setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN).setContentEncoding("UTF-8")
            .setMessageId("id-1").setCorrelationId("corr-1").setReplyTo("somewhere").setAppId("skiffmq-tests")
            .setType("greeting").setUserId("guest").setPriority(5).setExpiration("60000").setTimestamp(timestamp)
            .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
            .setHeader("string", "text").setHeader("int", 42).setHeader("long", 1L << 40).setHeader("bool", true)
            .setHeader("double", 2.5d).setHeader("decimal", new BigDecimal("12.34")).setHeader("date", timestamp)
            .setHeader("list", List.of("a", 1, false)).setHeader("table", nested)
            .setHeader("bytes", new byte[] {1, 2, 3}).build();
        CorrelationData correlation = new CorrelationData("props");
        template.send("", queue, message, correlation);
        assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).isTrue();

        Message got = template.receive(queue); // basic.get
        assertThat(got).isNotNull();
        assertThat(got.getBody()).asString(StandardCharsets.UTF_8).isEqualTo("with properties");
        MessageProperties properties = got.getMessageProperties();
        assertThat(properties.getContentType()).isEqualTo("text/plain");
        assertThat(properties.getContentEncoding()).isEqualTo("UTF-8");
        assertThat(properties.getMessageId()).isEqualTo("id-1");
        assertThat(properties.getCorrelationId()).isEqualTo("corr-1");
        assertThat(properties.getReplyTo()).isEqualTo("somewhere");
        assertThat(properties.getAppId()).isEqualTo("skiffmq-tests");
        assertThat(properties.getType()).isEqualTo("greeting");
        assertThat(properties.getReceivedUserId()).isEqualTo("guest");
        assertThat(properties.getPriority()).isEqualTo(5);
        assertThat(properties.getExpiration()).isEqualTo("60000");
        assertThat(properties.getTimestamp()).isEqualTo(timestamp);
        assertThat(properties.getReceivedDeliveryMode()).isEqualTo(MessageDeliveryMode.PERSISTENT);
        assertThat(properties.getRedelivered()).isFalse();
        assertThat(properties.getReceivedExchange()).isEmpty();
        assertThat(properties.getReceivedRoutingKey()).isEqualTo(queue);
        assertThat(properties.getMessageCount()).as("get-ok message-count: none left").isZero();
        Map<String, Object> headers = properties.getHeaders();
        assertThat(headers).containsEntry("string", "text").containsEntry("int", 42).containsEntry("long", 1L << 40)
            .containsEntry("bool", true).containsEntry("double", 2.5d).containsEntry("decimal", new BigDecimal("12.34"))
            .containsEntry("date", timestamp).containsEntry("list", List.of("a", 1, false))
            .containsEntry("table", nested);
        assertThat((byte[]) headers.get("bytes")).containsExactly(1, 2, 3);

        assertThat(template.receive(queue)).as("basic.get-empty").isNull();
    }

    @Test
    void aUserIdOtherThanTheConnectionsUserIsRefused() throws Exception {
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-user-id")));
        RabbitTemplate template = new RabbitTemplate(confirming);
        CorrelationData correlation = new CorrelationData("impostor");
        template.send("", queue, MessageBuilder.withBody(new byte[] {1}).setUserId("not-guest").build(), correlation);
        // 406 PRECONDITION_FAILED closes the channel: the message is never confirmed
        assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).isFalse();
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(0, 0);
    }

    @Test
    void jacksonConverterRoundTripsARecord() throws Exception {
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-json")));
        RabbitTemplate template = new RabbitTemplate(confirming);
        template.setMessageConverter(new JacksonJsonMessageConverter("io.skiffmq.server"));
        Order order = new Order("o-1", 3, new BigDecimal("9.99"), List.of("new", "eu"), Map.of("paris", 4));
        CorrelationData correlation = new CorrelationData("json");
        template.convertAndSend("", queue, order, correlation);
        assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).isTrue();
        template.convertAndSend("", queue, order);

        Message raw = template.receive(queue, 10_000); // a consumer with a timeout: basic.qos, consume, ack, cancel
        assertThat(raw).isNotNull();
        assertThat(raw.getMessageProperties().getContentType()).isEqualTo("application/json");
        assertThat(raw.getMessageProperties().getContentEncoding()).isEqualTo("UTF-8");
        assertThat(raw.getMessageProperties().getHeaders()).containsEntry("__TypeId__", Order.class.getName());
        assertThat(raw.getBody()).asString(StandardCharsets.UTF_8).contains("\"id\":\"o-1\"");

        Order back = template.receiveAndConvert(queue, 10_000, new ParameterizedTypeReference<Order>() { });
        assertThat(back).isEqualTo(order);
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(0, 0);
    }

    @Test
    void channelTransactedTemplateCommitsAtTheEndAndRollsBack() throws Exception {
        String queue = declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-tx")));
        RabbitTemplate template = new RabbitTemplate(plain);
        template.setChannelTransacted(true);
        TransactionTemplate transactions = new TransactionTemplate(new RabbitTransactionManager(plain));

        transactions.executeWithoutResult(status -> {
            template.convertAndSend("", queue, "tx-1");
            template.convertAndSend("", queue, "tx-2");
            try {
                assertThat(Amqp091Spring.counts(target, queue)).as("nothing before tx.commit").containsExactly(0, 0);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(Amqp091Spring.counts(target, queue)).as("both after tx.commit").containsExactly(2, 0);

        transactions.executeWithoutResult(status -> {
            template.convertAndSend("", queue, "rolled back");
            status.setRollbackOnly();
        });
        assertThat(Amqp091Spring.counts(target, queue)).as("tx.rollback drops the publish").containsExactly(2, 0);

        // outside a transaction, a transacted template commits each send itself
        template.convertAndSend("", queue, "tx-3");
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(3, 0);

        // a transacted receive: basic.get, then ack, then tx.commit; a rollback leaves the message for later
        transactions.executeWithoutResult(status -> {
            assertThat(template.receiveAndConvert(queue)).isEqualTo("tx-1");
            status.setRollbackOnly();
        });
        transactions.executeWithoutResult(status -> assertThat(template.receiveAndConvert(queue)).isEqualTo("tx-1"));
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(2, 0);
    }
}
