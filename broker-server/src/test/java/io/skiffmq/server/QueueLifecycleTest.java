package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.Requester;
import com.rabbitmq.client.amqp.Resource;
import com.rabbitmq.client.amqp.Responder;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Exclusive, auto-delete and deleted queues and exchanges through the RabbitMQ AMQP 1.0 Java client: request/reply
 * (which declares an exclusive auto-delete reply queue), and links detached when what they use is deleted.
 */
@ExtendWith(LeakDetection.class)
class QueueLifecycleTest {
    private static RunningBroker broker;
    private static Environment environment;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
    }

    @AfterAll
    static void stop() {
        environment.close();
        broker.close();
    }

    private static String text(Message message) {
        return new String(message.body(), StandardCharsets.UTF_8);
    }

    /** Waits for the resource to close and returns why. */
    private static Throwable closedBecause(BlockingQueue<Resource.Context> states) throws InterruptedException {
        for (Resource.Context c; (c = states.poll(10, TimeUnit.SECONDS)) != null; ) {
            if (c.currentState() == Resource.State.CLOSED) {
                return c.failureCause();
            }
        }
        throw new AssertionError("the link was not closed");
    }

    @Test
    void requesterAndResponderOnTwoConnections() throws Exception {
        try (Connection server = environment.connectionBuilder().build();
                Connection client = environment.connectionBuilder().build()) {
            server.management().queue().name("rpc-requests").exclusive(false).autoDelete(false).declare();
            Responder responder = server.responderBuilder().requestQueue("rpc-requests")
                .handler((context, request) -> context.message(("re: " + text(request)).getBytes(StandardCharsets.UTF_8)))
                .build();
            Requester requester = client.requesterBuilder().requestAddress().queue("rpc-requests").requester()
                .requestTimeout(Duration.ofSeconds(10)).build();
            CompletableFuture<Message> first = requester.publish(requester.message("one".getBytes(StandardCharsets.UTF_8)));
            CompletableFuture<Message> second = requester.publish(requester.message("two".getBytes(StandardCharsets.UTF_8)));
            assertThat(text(first.get(10, TimeUnit.SECONDS))).isEqualTo("re: one");
            assertThat(text(second.get(10, TimeUnit.SECONDS))).isEqualTo("re: two");

            long replyQueues = broker.vhost("/").queues().stream().filter(q -> q.declaration().exclusive()).count();
            assertThat(replyQueues).as("the requester's exclusive reply queue").isEqualTo(1);
            requester.close();
            responder.close();
            server.management().queueDelete("rpc-requests");
        }
        await("the reply queue goes with its connection").atMost(Duration.ofSeconds(10))
            .until(() -> broker.vhost("/").queues().stream().noneMatch(q -> q.declaration().exclusive()));
    }

    @Test
    void anExclusiveQueueIsLockedToOtherConnectionsAndGoesWithItsOwn() throws Exception {
        Connection owner = environment.connectionBuilder().build();
        Management management = owner.management();
        management.queue().name("mine").exclusive(true).declare();
        Publisher publisher = owner.publisherBuilder().queue("mine").build();
        try (Connection other = environment.connectionBuilder().build()) {
            assertThatThrownBy(() -> other.consumerBuilder().queue("mine").messageHandler((c, m) -> c.accept()).build())
                .isInstanceOf(AmqpException.class);
            // RabbitMQ's text, which the client matches on (AmqpUtils.EXCLUSIVE_ACCESS_EXCEPTION_PREDICATE)
            assertThatThrownBy(() -> other.management().queue().name("mine").exclusive(true).declare())
                .isInstanceOf(AmqpException.class)
                .hasMessageContaining("cannot obtain exclusive access to locked queue 'mine' in vhost '/'")
                .hasMessageContaining("the exclusive property value does not match that of the original declaration");
            Publisher stranger = other.publisherBuilder().queue("mine").build();
            BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
            stranger.publish(stranger.message("from elsewhere".getBytes(StandardCharsets.UTF_8)),
                context -> outcome.add(context.status()));
            assertThat(outcome.poll(10, TimeUnit.SECONDS)).as("anyone may publish to it").isEqualTo(Publisher.Status.ACCEPTED);
        }
        BlockingQueue<String> got = new ArrayBlockingQueue<>(1);
        Consumer consumer = owner.consumerBuilder().queue("mine").messageHandler((c, m) -> {
            got.add(text(m));
            c.accept();
        }).build();
        assertThat(got.poll(10, TimeUnit.SECONDS)).isEqualTo("from elsewhere");
        consumer.close();
        publisher.close();
        owner.close();
        await("gone with its connection").atMost(Duration.ofSeconds(10)).until(() -> broker.vhost("/").queue("mine") == null);
    }

    @Test
    void anAutoDeleteQueueGoesWithItsLastConsumer() throws Exception {
        try (Connection connection = environment.connectionBuilder().build()) {
            Management management = connection.management();
            management.queue().name("fleeting").autoDelete(true).exclusive(false).declare();
            Consumer a = connection.consumerBuilder().queue("fleeting").messageHandler((c, m) -> c.accept()).build();
            Consumer b = connection.consumerBuilder().queue("fleeting").messageHandler((c, m) -> c.accept()).build();
            a.close();
            assertThat(management.queueInfo("fleeting").consumerCount()).isEqualTo(1);
            b.close();
            await("deleted with its last consumer").atMost(Duration.ofSeconds(10))
                .until(() -> broker.vhost("/").queue("fleeting") == null);
            assertThatThrownBy(() -> management.queueInfo("fleeting"))
                .isInstanceOf(AmqpException.AmqpEntityDoesNotExistException.class);
        }
    }

    /** As RabbitMQ 4 does ({@code rabbit_amqp_session:destroy_links}): amqp:resource-deleted, for both sides. */
    @Test
    void deletingAQueueDetachesItsConsumersAndPublishersWithResourceDeleted() throws Exception {
        try (Connection connection = environment.connectionBuilder().build()) {
            Management management = connection.management();
            management.queue().name("doomed").declare();
            BlockingQueue<Resource.Context> consumerStates = new ArrayBlockingQueue<>(10);
            BlockingQueue<Resource.Context> publisherStates = new ArrayBlockingQueue<>(10);
            connection.consumerBuilder().queue("doomed").listeners(consumerStates::add)
                .messageHandler((c, m) -> c.accept()).build();
            connection.publisherBuilder().queue("doomed").listeners(publisherStates::add).build();
            management.queueDelete("doomed");
            assertThat(closedBecause(consumerStates)).as("consumer")
                .isInstanceOf(AmqpException.AmqpEntityDoesNotExistException.class)
                .hasMessageContaining("amqp:resource-deleted");
            assertThat(closedBecause(publisherStates)).as("publisher")
                .isInstanceOf(AmqpException.AmqpEntityDoesNotExistException.class)
                .hasMessageContaining("amqp:resource-deleted");
            assertThat(connection.management().queue().name("after").declare().name()).as("the connection lives on")
                .isEqualTo("after");
            management.queueDelete("after");
        }
    }

    /**
     * As RabbitMQ 4 does ({@code lookup_target}): an exchange target's deletion is found by the next transfer, which
     * is released, and the link detached with amqp:not-found; other links carry on.
     */
    @Test
    void aPublisherFindsItsExchangeDeletedAtItsNextMessage() throws Exception {
        try (Connection connection = environment.connectionBuilder().build()) {
            Management management = connection.management();
            management.exchange().name("doomed-x").type(Management.ExchangeType.FANOUT).declare();
            BlockingQueue<Resource.Context> states = new ArrayBlockingQueue<>(10);
            Publisher publisher = connection.publisherBuilder().exchange("doomed-x").listeners(states::add).build();
            Publisher survivor = connection.publisherBuilder().exchange("amq.fanout").build();
            management.exchangeDelete("doomed-x");
            assertThat(outcome(survivor)).as("other links carry on").isEqualTo(Publisher.Status.RELEASED);
            assertThat(states).as("still attached").noneMatch(c -> c.currentState() == Resource.State.CLOSED);

            assertThat(outcome(publisher)).isEqualTo(Publisher.Status.RELEASED);
            assertThat(closedBecause(states)).isInstanceOf(AmqpException.AmqpEntityDoesNotExistException.class)
                .hasMessageContaining("no exchange 'doomed-x' in vhost '/'").hasMessageContaining("amqp:not-found");
            assertThatThrownBy(() -> publisher.publish(publisher.message(), c -> { }))
                .isInstanceOf(AmqpException.class);
        }
    }

    @Test
    void aPublisherWhoseExchangeIsDeclaredAgainGoesOn() throws Exception {
        try (Connection connection = environment.connectionBuilder().build()) {
            Management management = connection.management();
            management.exchange().name("reborn-x").type(Management.ExchangeType.FANOUT).declare();
            management.queue().name("reborn-q").declare();
            Publisher publisher = connection.publisherBuilder().exchange("reborn-x").build();
            management.exchangeDelete("reborn-x");
            management.exchange().name("reborn-x").type(Management.ExchangeType.FANOUT).declare();
            management.binding().sourceExchange("reborn-x").destinationQueue("reborn-q").bind();
            assertThat(outcome(publisher)).isEqualTo(Publisher.Status.ACCEPTED);
            assertThat(management.queueInfo("reborn-q").messageCount()).isEqualTo(1);
            management.exchangeDelete("reborn-x");
            management.queueDelete("reborn-q");
        }
    }

    private static Publisher.Status outcome(Publisher publisher) throws InterruptedException {
        BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
        publisher.publish(publisher.message("x".getBytes(StandardCharsets.UTF_8)), c -> outcome.add(c.status()));
        Publisher.Status status = outcome.poll(10, TimeUnit.SECONDS);
        assertThat(status).as("an outcome").isNotNull();
        return status;
    }
}
