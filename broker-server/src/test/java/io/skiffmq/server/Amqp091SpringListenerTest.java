package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.event.AmqpEvent;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.ListenerContainerConsumerFailedEvent;
import org.springframework.amqp.rabbit.listener.ListenerContainerConsumerTerminatedEvent;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.ConsumerCancelledException;

/**
 * Spring AMQP's two listener containers, {@link SimpleMessageListenerContainer} and
 * {@link DirectMessageListenerContainer}, with MANUAL acknowledgement: an exact number of messages consumed in
 * publish order, settled by multiple acks, one of them nacked with requeue once and redelivered with the
 * redelivered flag; consumer counts while the container runs and after; prefetched messages a stopped container
 * never acked back in the queue; and the broker's own {@code basic.cancel} when a consumed queue is deleted, as each
 * container reports it.
 */
@ExtendWith(LeakDetection.class)
class Amqp091SpringListenerTest {
    private static final int COUNT = 200;
    private static final String NACKED = "m-42";

    private static Amqp091Target target;
    private static CachingConnectionFactory publishing;
    private static RabbitAdmin admin;
    private final List<String> queues = new ArrayList<>();
    private final List<CachingConnectionFactory> consuming = new ArrayList<>();

    private static final Map<String, Function<ConnectionFactory, AbstractMessageListenerContainer>> CONTAINERS = Map.of(
        "simple", factory -> {
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(factory);
            container.setConcurrentConsumers(1);
            return container;
        },
        "direct", factory -> {
            DirectMessageListenerContainer container = new DirectMessageListenerContainer(factory);
            container.setConsumersPerQueue(1);
            return container;
        });

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
        publishing = Amqp091Spring.connectionFactory(target, ConfirmType.CORRELATED, false);
        admin = new RabbitAdmin(publishing);
    }

    @AfterAll
    static void stop() {
        if (publishing != null) {
            publishing.destroy();
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        consuming.forEach(CachingConnectionFactory::destroy);
        Amqp091Spring.deleteQueuesAndExchanges(target, queues, List.of());
    }

    private String declareQueue() {
        String name = admin.declareQueue(QueueBuilder.durable(Amqp091Spring.unique("spring-listener")).build());
        queues.add(name);
        return name;
    }

    /** Publishes {@code m-from .. m-(to-1)} on one channel (a cached template may spread sends over several). */
    private static void publish(String queue, int from, int to) throws Exception {
        RabbitTemplate template = new RabbitTemplate(publishing);
        List<CorrelationData> correlations = new ArrayList<>();
        template.invoke(operations -> {
            for (int i = from; i < to; i++) {
                CorrelationData correlation = new CorrelationData("c-" + i);
                correlations.add(correlation);
                operations.send("", queue, MessageBuilder.withBody(("m-" + i).getBytes(StandardCharsets.UTF_8))
                    .setMessageId("id-" + i).build(), correlation);
            }
            return null;
        });
        for (CorrelationData correlation : correlations) {
            assertThat(correlation.getFuture().get(10, TimeUnit.SECONDS).ack()).isTrue();
        }
    }

    private AbstractMessageListenerContainer container(String kind, String queue,
        ChannelAwareMessageListener listener) {
        CachingConnectionFactory factory = Amqp091Spring.connectionFactory(target, ConfirmType.NONE, false);
        consuming.add(factory);
        AbstractMessageListenerContainer container = CONTAINERS.get(kind).apply(factory);
        container.setQueueNames(queue);
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setMessageListener(listener);
        container.afterPropertiesSet();
        return container;
    }

    /**
     * Acknowledges every tenth message and the last with {@code multiple}; nacks {@link #NACKED} with requeue the
     * first time it comes. Runs on the container's one consumer thread.
     */
    private static final class ManualListener implements ChannelAwareMessageListener {
        final List<String> firstDeliveries = new CopyOnWriteArrayList<>();
        final List<String> redeliveries = new CopyOnWriteArrayList<>();
        final AtomicInteger deliveries = new AtomicInteger();
        final AtomicInteger settled = new AtomicInteger();
        final CountDownLatch allSettled = new CountDownLatch(COUNT);

        @Override
        public void onMessage(Message message, Channel channel) throws IOException {
            deliveries.incrementAndGet();
            String body = new String(message.getBody(), StandardCharsets.UTF_8);
            long tag = message.getMessageProperties().getDeliveryTag();
            if (message.getMessageProperties().isRedelivered()) {
                redeliveries.add(body);
            } else {
                firstDeliveries.add(body);
            }
            if (body.equals(NACKED) && !message.getMessageProperties().isRedelivered()) {
                channel.basicNack(tag, false, true);
                return;
            }
            int n = settled.incrementAndGet();
            if (n % 10 == 0 || n == COUNT) {
                channel.basicAck(tag, true);
            }
            allSettled.countDown();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"simple", "direct"})
    void manualAcksConsumeExactlyWhatWasPublishedAndANackedMessageComesBackRedelivered(String kind) throws Exception {
        String queue = declareQueue();
        publish(queue, 0, COUNT / 2);
        ManualListener listener = new ManualListener();
        AbstractMessageListenerContainer container = container(kind, queue, listener);
        container.start();
        publish(queue, COUNT / 2, COUNT);

        assertThat(listener.allSettled.await(30, TimeUnit.SECONDS)).as("%d settled", COUNT).isTrue();
        List<String> published = new ArrayList<>();
        for (int i = 0; i < COUNT; i++) {
            published.add("m-" + i);
        }
        assertThat(listener.firstDeliveries).as("one consumer gets the queue in order").isEqualTo(published);
        assertThat(listener.redeliveries).containsExactly(NACKED);
        assertThat(listener.deliveries.get()).isEqualTo(COUNT + 1);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(admin.getQueueInfo(queue).getConsumerCount()).isEqualTo(1);
            assertThat(admin.getQueueInfo(queue).getMessageCount()).isZero();
        });

        container.stop();
        consuming.forEach(CachingConnectionFactory::destroy);
        // anything left unacknowledged would be ready again now that the container's connection is closed
        await().atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(Amqp091Spring.counts(target, queue)).containsExactly(0, 0));
        assertThat(listener.deliveries.get()).as("nothing delivered after the last ack").isEqualTo(COUNT + 1);
    }

    /**
     * A container stopped while its listener holds prefetched messages it never acked: the container cancels its
     * consumer, then closes the channel (its connection stays open), and every one of them is back in the queue, in
     * order, redelivered.
     */
    @ParameterizedTest
    @ValueSource(strings = {"simple", "direct"})
    void aContainerStoppedWhileHoldingPrefetchedMessagesLeavesThemAllInTheQueue(String kind) throws Exception {
        int count = 50;
        int prefetch = 10;
        String queue = declareQueue();
        publish(queue, 0, count);
        List<String> held = new CopyOnWriteArrayList<>();
        AbstractMessageListenerContainer container = container(kind, queue,
            (message, channel) -> held.add(new String(message.getBody(), StandardCharsets.UTF_8)));
        container.setPrefetchCount(prefetch);
        container.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> held.size() == prefetch);
        assertThat(Amqp091Spring.counts(target, queue)).containsExactly(count - prefetch, 1);

        container.stop();
        await().atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(Amqp091Spring.counts(target, queue)).containsExactly(count, 0));
        assertThat(held).as("nothing more came").hasSize(prefetch);
        try (com.rabbitmq.client.Connection connection = target.factory().newConnection()) {
            Channel channel = connection.createChannel();
            for (int i = 0; i < count; i++) {
                com.rabbitmq.client.GetResponse got = channel.basicGet(queue, true);
                assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("m-" + i);
                assertThat(got.getEnvelope().isRedeliver()).as("m-%d redelivered", i).isEqualTo(i < prefetch);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"simple", "direct"})
    void deletingTheQueueCancelsTheContainersConsumer(String kind) throws Exception {
        String queue = declareQueue();
        BlockingQueue<AmqpEvent> events = new LinkedBlockingQueue<>();
        CountDownLatch consumed = new CountDownLatch(1);
        AbstractMessageListenerContainer container = container(kind, queue, (message, channel) -> {
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
            consumed.countDown();
        });
        container.setApplicationEventPublisher(event -> {
            if (event instanceof AmqpEvent amqpEvent) {
                events.add(amqpEvent);
            }
        });
        container.start();
        publish(queue, 0, 1);
        assertThat(consumed.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(admin.deleteQueue(queue)).isTrue();
        // SimpleMessageListenerContainer: a ConsumerCancelledException, then a restart that finds no queue;
        // DirectMessageListenerContainer: its consumer "canceled"
        AmqpEvent cancelled = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cancelled == null && System.nanoTime() < deadline) {
            AmqpEvent event = events.poll(100, TimeUnit.MILLISECONDS);
            if (event instanceof ListenerContainerConsumerFailedEvent failed
                && failed.getThrowable() instanceof ConsumerCancelledException
                || event instanceof ListenerContainerConsumerTerminatedEvent terminated
                && terminated.getReason().contains("canceled")) {
                cancelled = event;
            }
        }
        assertThat(cancelled).as("the broker's basic.cancel reaches the container").isNotNull();
        container.stop();
    }
}
