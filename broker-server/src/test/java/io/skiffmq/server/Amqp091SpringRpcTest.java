package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.adapter.MessageListenerAdapter;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.amqp.support.converter.SimpleMessageConverter;
import org.springframework.core.ParameterizedTypeReference;

/**
 * Request and reply with Spring AMQP: {@code RabbitTemplate.convertSendAndReceive} through direct reply-to, the
 * template's default (it passively declares {@code amq.rabbitmq.reply-to}, consumes it with no-ack and publishes
 * on that same channel; the responder sees {@code amq.rabbitmq.reply-to.<token>} as reply-to and answers through
 * the default exchange), for strings, for JSON records and from several threads at once; and the rules RabbitMQ
 * sets around the pseudo-queue, seen with the plain client.
 */
@ExtendWith(LeakDetection.class)
class Amqp091SpringRpcTest {
    private static final String DIRECT_REPLY_TO = "amq.rabbitmq.reply-to";

    private static Amqp091Target target;
    private static CachingConnectionFactory requesting;
    private static CachingConnectionFactory responding;
    private static RabbitAdmin admin;
    private final List<String> queues = new ArrayList<>();
    private final List<DirectMessageListenerContainer> responders = new ArrayList<>();
    private final List<RabbitTemplate> requesters = new ArrayList<>();

    record Order(String id, int quantity, BigDecimal price) {
    }

    record Receipt(String orderId, BigDecimal total, String status) {
    }

    /** The responder's service: MessageListenerAdapter calls handleMessage and sends what it returns. */
    public static final class Service {
        public String handleMessage(String request) {
            return request.toUpperCase(Locale.ROOT);
        }

        public Receipt handleMessage(Order order) {
            return new Receipt(order.id(), order.price().multiply(BigDecimal.valueOf(order.quantity())), "accepted");
        }
    }

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
        requesting = Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        responding = Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        admin = new RabbitAdmin(responding);
    }

    @AfterAll
    static void stop() {
        for (CachingConnectionFactory factory : new CachingConnectionFactory[] {requesting, responding}) {
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
        requesters.forEach(RabbitTemplate::stop);
        responders.forEach(DirectMessageListenerContainer::stop);
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, List.of());
    }

    /** Starts a responder on a new queue; every request's reply-to and correlation id land in {@code seen}. */
    private String responder(MessageConverter converter, List<MessageProperties> seen) {
        String queue = admin.declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique("spring-rpc")).build());
        queues.add(queue);
        MessageListenerAdapter adapter = new MessageListenerAdapter(new Service(), converter);
        DirectMessageListenerContainer container = new DirectMessageListenerContainer(responding);
        container.setQueueNames(queue);
        container.setMessageListener((ChannelAwareMessageListener) (message, channel) -> {
            seen.add(message.getMessageProperties());
            adapter.onMessage(message, channel);
        });
        container.afterPropertiesSet();
        container.start();
        responders.add(container);
        return queue;
    }

    private RabbitTemplate requester(MessageConverter converter) {
        RabbitTemplate template = new RabbitTemplate(requesting);
        template.setMessageConverter(converter);
        template.setReplyTimeout(10_000);
        requesters.add(template);
        return template;
    }

    private static Object field(RabbitTemplate template, String name) throws ReflectiveOperationException {
        Field field = RabbitTemplate.class.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(template);
    }

    private static void assertDirectReplyTo(RabbitTemplate template, List<MessageProperties> seen, int requests)
        throws ReflectiveOperationException {
        assertThat(field(template, "usingFastReplyTo")).as("the passive declare of amq.rabbitmq.reply-to worked")
            .isEqualTo(true);
        assertThat(field(template, "replyAddress")).isEqualTo(DIRECT_REPLY_TO);
        assertThat(seen).hasSize(requests);
        for (MessageProperties properties : seen) {
            // the broker rewrites reply-to; a temporary queue would show as amq.gen-...
            assertThat(properties.getReplyTo()).startsWith(DIRECT_REPLY_TO + ".")
                .hasSizeGreaterThan(DIRECT_REPLY_TO.length() + 1);
            assertThat(properties.getCorrelationId()).isNotBlank();
        }
    }

    @Test
    void convertSendAndReceiveUsesDirectReplyTo() throws Exception {
        List<MessageProperties> seen = new CopyOnWriteArrayList<>();
        String queue = responder(new SimpleMessageConverter(), seen);
        RabbitTemplate template = requester(new SimpleMessageConverter());
        for (int i = 0; i < 10; i++) {
            assertThat(template.convertSendAndReceive("", queue, "ping-" + i)).isEqualTo("PING-" + i);
        }
        assertDirectReplyTo(template, seen, 10);
    }

    @Test
    void jsonRecordsGoBothWaysThroughDirectReplyTo() throws Exception {
        List<MessageProperties> seen = new CopyOnWriteArrayList<>();
        JacksonJsonMessageConverter converter = new JacksonJsonMessageConverter("io.skiffmq.server");
        String queue = responder(converter, seen);
        RabbitTemplate template = requester(converter);
        Receipt receipt = template.convertSendAndReceiveAsType("", queue, new Order("o-7", 3, new BigDecimal("2.50")),
            new ParameterizedTypeReference<Receipt>() { });
        assertThat(receipt).isEqualTo(new Receipt("o-7", new BigDecimal("7.50"), "accepted"));
        assertThat(seen.get(0).getContentType()).isEqualTo("application/json");
        assertThat(seen.get(0).getHeaders()).containsEntry("__TypeId__", Order.class.getName());
        assertDirectReplyTo(template, seen, 1);
    }

    @Test
    void concurrentRequestsEachGetTheirOwnReply() throws Exception {
        List<MessageProperties> seen = new CopyOnWriteArrayList<>();
        String queue = responder(new SimpleMessageConverter(), seen);
        RabbitTemplate template = requester(new SimpleMessageConverter());
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Object>>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                results.add(threads.submit(() -> {
                    List<Object> replies = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        replies.add(template.convertSendAndReceive("", queue, "t" + thread + "-" + i));
                    }
                    return replies;
                }));
            }
            for (int t = 0; t < 4; t++) {
                assertThat(results.get(t).get(30, TimeUnit.SECONDS))
                    .containsExactly("T" + t + "-0", "T" + t + "-1", "T" + t + "-2", "T" + t + "-3", "T" + t + "-4");
            }
        } finally {
            threads.shutdownNow();
        }
        assertDirectReplyTo(template, seen, 20);
    }

    @Test
    void directReplyToNeedsANoAckConsumerOnThePublishingChannel() throws Exception {
        try (Connection connection = target.factory().newConnection("reply-to-rules")) {
            Channel declaring = connection.createChannel();
            AMQP.Queue.DeclareOk ok = declaring.queueDeclarePassive(DIRECT_REPLY_TO);
            assertThat(ok.getQueue()).isEqualTo(DIRECT_REPLY_TO);
            // RabbitMQ answers 0 messages, 1 consumer (3.x rabbit_channel; 4.2's rabbit_volatile_queue:stat/1 too)
            assertThat(ok.getMessageCount()).isZero();
            assertThat(ok.getConsumerCount()).isEqualTo(1);

            Channel acking = connection.createChannel();
            assertThatThrownBy(() -> acking.basicConsume(DIRECT_REPLY_TO, false, (tag, delivery) -> { }, tag -> { }))
                .hasStackTraceContaining("PRECONDITION_FAILED");

            Channel notConsuming = connection.createChannel();
            notConsuming.basicPublish("", "anywhere", new AMQP.BasicProperties.Builder().replyTo(DIRECT_REPLY_TO)
                .build(), new byte[] {1});
            // the 406 arrives asynchronously; the next synchronous method on the channel sees it
            assertThatThrownBy(() -> notConsuming.queueDeclarePassive(DIRECT_REPLY_TO))
                .hasStackTraceContaining("PRECONDITION_FAILED");
            assertThat(declaring.isOpen()).as("channel errors only").isTrue();
        }
    }
}
