package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.retry.RejectAndDontRequeueRecoverer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring AMQP's retry-to-dead-letter-queue pattern: the work queue is declared with {@code x-dead-letter-exchange ""}
 * and {@code x-dead-letter-routing-key} the dead-letter queue's name; a listener that gives up throws
 * {@link AmqpRejectAndDontRequeueException} (directly, or through a retry interceptor's
 * {@link RejectAndDontRequeueRecoverer} once its attempts are spent), the container rejects without requeue, and
 * the message lands on the dead-letter queue with its {@code x-death} history, which Spring reads back. With a
 * {@link SimpleMessageListenerContainer} and with a {@code @RabbitListener}.
 */
@ExtendWith(LeakDetection.class)
class Amqp091SpringDeadLetterTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static Amqp091Target target;
    private static CachingConnectionFactory factory;
    private static RabbitAdmin admin;
    private final List<String> queues = new ArrayList<>();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
        factory = Amqp091Spring.connectionFactory(target, ConfirmType.CORRELATED, false);
        admin = new RabbitAdmin(factory);
    }

    @AfterAll
    static void stop() {
        if (factory != null) {
            factory.destroy();
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable resource : closeAfter) {
            resource.close();
        }
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, List.of());
    }

    /** The work queue and its dead-letter queue, declared the usual Spring way: {@code [work, dlq]}. */
    private String[] declareWorkAndDeadLetterQueues(String prefix) {
        String dlq = admin.declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique(prefix + ".dlq")).build());
        String work = admin.declareQueue(QueueBuilder.nonDurable(Amqp091Spring.unique(prefix))
            .deadLetterExchange("").deadLetterRoutingKey(dlq).build());
        queues.add(work);
        queues.add(dlq);
        return new String[] {work, dlq};
    }

    private static void send(String queue, String body) {
        new RabbitTemplate(factory).send("", queue, MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
            .setMessageId("id-" + body).setHeader("app", "kept").build());
    }

    /** The dead-lettered message, read back through Spring, checked as Spring shows its history. */
    private static void assertDeadLettered(String work, String dlq, String body) throws Exception {
        Message dead = new RabbitTemplate(factory).receive(dlq, TIMEOUT.toMillis());
        assertThat(dead).as("on the dead-letter queue").isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo(body);
        assertThat(dead.getMessageProperties().getMessageId()).isEqualTo("id-" + body);
        assertThat((Object) dead.getMessageProperties().getHeader("app")).hasToString("kept");
        assertThat(dead.getMessageProperties().getReceivedRoutingKey()).isEqualTo(dlq);
        List<Map<String, ?>> deaths = dead.getMessageProperties().getXDeathHeader();
        assertThat(deaths).hasSize(1);
        Map<String, ?> death = deaths.get(0);
        assertThat(death.get("count")).isEqualTo(1L);
        assertThat(death.get("reason")).hasToString("rejected");
        assertThat(death.get("queue")).hasToString(work);
        assertThat(death.get("exchange")).hasToString("");
        assertThat(((List<?>) death.get("routing-keys")).stream().map(String::valueOf)).containsExactly(work);
        assertThat(death.get("time")).isInstanceOf(java.util.Date.class);
        assertThat((Object) dead.getMessageProperties().getHeader("x-first-death-reason")).hasToString("rejected");
        assertThat((Object) dead.getMessageProperties().getHeader("x-first-death-queue")).hasToString(work);
        assertThat(Amqp091Spring.counts(target, work)[0]).as("gone from the work queue").isZero();
        assertThat(Amqp091Spring.counts(target, dlq)[0]).as("exactly one dead-lettered").isZero();
    }

    /**
     * A quorum queue declared the Spring way ({@code QueueBuilder.durable(..).quorum()}) with a delivery limit: a
     * listener that keeps failing (the container requeues) sees {@code x-delivery-count} grow on each redelivery, and
     * past the limit the message is dead-lettered as {@code delivery_limit}.
     */
    @Test
    void aQuorumQueuesPoisonMessageIsDeadLetteredPastItsDeliveryLimit() throws Exception {
        String dlq = admin.declareQueue(QueueBuilder.durable(Amqp091Spring.unique("qq.dlq")).quorum().build());
        String work = admin.declareQueue(QueueBuilder.durable(Amqp091Spring.unique("qq")).quorum().deliveryLimit(2)
            .deadLetterExchange("").deadLetterRoutingKey(dlq).build());
        queues.add(work);
        queues.add(dlq);
        assertThat(admin.getQueueInfo(work)).isNotNull();
        List<Object> counts = new java.util.concurrent.CopyOnWriteArrayList<>();
        container(work, new org.aopalliance.aop.Advice[0], message -> {
            counts.add(message.getMessageProperties().getHeader("x-delivery-count"));
            throw new IllegalStateException("poison");
        });
        send(work, "poison");
        Message dead = new RabbitTemplate(factory).receive(dlq, TIMEOUT.toMillis());
        assertThat(dead).as("on the dead-letter queue").isNotNull();
        assertThat(dead.getMessageProperties().getXDeathHeader().get(0).get("reason")).hasToString("delivery_limit");
        assertThat(counts).containsExactly(null, 1L, 2L);
    }

    /** A started container; {@code advice} (retry) is applied when it is initialized, so it is given here. */
    private SimpleMessageListenerContainer container(String queue, org.aopalliance.aop.Advice[] advice,
            org.springframework.amqp.core.MessageListener listener) {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(factory);
        container.setQueueNames(queue);
        container.setAcknowledgeMode(AcknowledgeMode.AUTO);
        container.setMessageListener(listener);
        container.setAdviceChain(advice);
        container.setReceiveTimeout(100); // how long its consumer thread takes to notice a stop
        container.afterPropertiesSet();
        container.start();
        closeAfter.add(container::stop);
        return container;
    }

    @Test
    void aListenerThatRejectsWithoutRequeueSendsTheMessageToTheDeadLetterQueue() throws Exception {
        String[] names = declareWorkAndDeadLetterQueues("spring-reject");
        List<String> seen = new CopyOnWriteArrayList<>();
        container(names[0], new org.aopalliance.aop.Advice[0], message -> {
            seen.add(new String(message.getBody(), StandardCharsets.UTF_8));
            throw new AmqpRejectAndDontRequeueException("cannot handle this one");
        });
        send(names[0], "poison");
        assertDeadLettered(names[0], names[1], "poison");
        assertThat(seen).as("delivered once, not requeued").containsExactly("poison");
    }

    @Test
    void aRetryInterceptorTriesThenItsRecovererDeadLetters() throws Exception {
        String[] names = declareWorkAndDeadLetterQueues("spring-retry");
        AtomicInteger attempts = new AtomicInteger();
        org.aopalliance.aop.Advice retry = RetryInterceptorBuilder.stateless().maxRetries(2).backOffOptions(1, 1.0, 1)
            .recoverer(new RejectAndDontRequeueRecoverer()).build();
        container(names[0], new org.aopalliance.aop.Advice[] {retry}, message -> {
            attempts.incrementAndGet();
            throw new IllegalStateException("failing, attempt " + attempts.get());
        });
        send(names[0], "retried");
        assertDeadLettered(names[0], names[1], "retried");
        assertThat(attempts).as("one attempt and two retries, in the listener's thread").hasValue(3);
    }

    /** A {@code @RabbitListener} application: its queues are beans its admin declares. */
    @Configuration
    @EnableRabbit
    static class ListenerApplication {
        static final String DLQ = Amqp091Spring.unique("spring-annotated.dlq");
        static final String WORK = Amqp091Spring.unique("spring-annotated");
        static final List<String> SEEN = new CopyOnWriteArrayList<>();

        @Bean
        ConnectionFactory connectionFactory() {
            return Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        }

        @Bean
        RabbitAdmin rabbitAdmin(ConnectionFactory connectionFactory) {
            return new RabbitAdmin(connectionFactory);
        }

        @Bean
        Queue deadLetterQueue() {
            return QueueBuilder.nonDurable(DLQ).build();
        }

        @Bean
        Queue workQueue() {
            return QueueBuilder.nonDurable(WORK).deadLetterExchange("").deadLetterRoutingKey(DLQ).build();
        }

        @Bean
        SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(ConnectionFactory connectionFactory) {
            SimpleRabbitListenerContainerFactory containers = new SimpleRabbitListenerContainerFactory();
            containers.setConnectionFactory(connectionFactory);
            containers.setReceiveTimeout(100L);
            return containers;
        }

        @RabbitListener(queues = "#{workQueue.name}")
        void handle(Message message) {
            SEEN.add(new String(message.getBody(), StandardCharsets.UTF_8));
            throw new AmqpRejectAndDontRequeueException("rejected by the @RabbitListener");
        }
    }

    @Test
    void aRabbitListenerThatRejectsSendsTheMessageToTheDeadLetterQueue() throws Exception {
        queues.add(ListenerApplication.WORK);
        queues.add(ListenerApplication.DLQ);
        try (AnnotationConfigApplicationContext application =
                new AnnotationConfigApplicationContext(ListenerApplication.class)) {
            send(ListenerApplication.WORK, "annotated");
            Awaitility.await().atMost(TIMEOUT).until(() -> ListenerApplication.SEEN.size() == 1);
            assertDeadLettered(ListenerApplication.WORK, ListenerApplication.DLQ, "annotated");
            assertThat(ListenerApplication.SEEN).containsExactly("annotated");
            assertThat(application.isRunning()).isTrue();
        }
    }
}
