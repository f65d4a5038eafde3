package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.Resource;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A message's user-id as RabbitMQ checks it ({@code rabbit_access_control:check_user_id}): it must be the name the
 * publisher logged in with, unless that user has the {@code impersonator} tag. Over 0-9-1 a wrong one closes the
 * channel with 406; over AMQP 1.0 (RabbitMQ 4, {@code rabbit_amqp_session:check_user_id}) it detaches the link with
 * {@code amqp:unauthorized-access}, settled or not, with no disposition; the HTTP API's publish answers 400.
 */
@ExtendWith(LeakDetection.class)
class UserIdCheckTest {
    private static final String QUEUE = "user-id-q";
    private static RunningBroker broker;
    private static Environment environment;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        for (String user : List.of("ursula", "ivan")) {
            broker.admin().putUser(user, "pw", user.equals("ivan") ? List.of("impersonator") : List.of());
            broker.admin().setPermissions(user, "/", ".*", ".*", ".*");
        }
        broker.vhost("/").declareQueue(QUEUE);
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .environmentBuilder().build();
    }

    @AfterAll
    static void stop() {
        environment.close();
        broker.close();
    }

    private static String refused(String claimed, String user) {
        return "user_id property set to '" + claimed + "' but authenticated user was '" + user + "'";
    }

    // ---- AMQP 0-9-1 ---------------------------------------------------------------------------------------------

    private static com.rabbitmq.client.Connection amqp091(String user) throws Exception {
        return VirtualHostTest.factory(broker, "/", user, "pw").newConnection();
    }

    @Test
    void anImpersonatorMayPublishAnyUserIdOver091() throws Exception {
        try (com.rabbitmq.client.Connection ivan = amqp091("ivan")) {
            Channel channel = ivan.createChannel();
            String queue = channel.queueDeclare().getQueue();
            channel.confirmSelect();
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().userId("someone else").build(),
                bytes("impersonated"));
            channel.waitForConfirmsOrDie(10_000);
            assertThat(channel.basicGet(queue, true).getProps().getUserId()).isEqualTo("someone else");
        }
    }

    @Test
    void anotherUserIdIsRefusedOver091() throws Exception {
        try (com.rabbitmq.client.Connection ursula = amqp091("ursula")) {
            Channel channel = ursula.createChannel();
            channel.basicPublish("", QUEUE, new AMQP.BasicProperties.Builder().userId("ivan").build(), bytes("no"));
            awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - " + refused("ivan", "ursula"));
        }
    }

    // ---- AMQP 1.0 -----------------------------------------------------------------------------------------------

    private static Connection amqp10(String user) {
        return environment.connectionBuilder().username(user).password("pw").build();
    }

    /** The publisher's outcome for one message with user-id {@code claimed}. */
    private static Publisher.Status publish(Publisher publisher, String claimed) throws InterruptedException {
        BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
        publisher.publish(publisher.message("m".getBytes(StandardCharsets.UTF_8))
            .userId(claimed.getBytes(StandardCharsets.UTF_8)), c -> outcome.add(c.status()));
        return outcome.poll(10, TimeUnit.SECONDS);
    }

    @Test
    void anImpersonatorMayPublishAnyUserIdOverAmqp10() throws Exception {
        try (Connection ivan = amqp10("ivan")) {
            Publisher publisher = ivan.publisherBuilder().queue(QUEUE).build();
            assertThat(publish(publisher, "ivan")).isEqualTo(Publisher.Status.ACCEPTED);
            assertThat(publish(publisher, "someone else")).isEqualTo(Publisher.Status.ACCEPTED);
        }
    }

    /** RabbitMQ 4's text and condition, on the link only: the connection and its other links go on. */
    @Test
    void anotherUserIdDetachesThePublisherOverAmqp10() throws Exception {
        try (Connection ursula = amqp10("ursula")) {
            BlockingQueue<Resource.Context> states = new ArrayBlockingQueue<>(10);
            Publisher publisher = ursula.publisherBuilder().queue(QUEUE).listeners(states::add).build();
            Publisher other = ursula.publisherBuilder().queue(QUEUE).build();
            assertThat(publish(publisher, "ursula")).isEqualTo(Publisher.Status.ACCEPTED);
            publisher.publish(publisher.message("forged".getBytes(StandardCharsets.UTF_8))
                .userId("ivan".getBytes(StandardCharsets.UTF_8)), c -> { });
            Throwable cause = null;
            for (Resource.Context c; cause == null && (c = states.poll(10, TimeUnit.SECONDS)) != null; ) {
                if (c.currentState() == Resource.State.CLOSED) {
                    cause = c.failureCause();
                }
            }
            assertThat(cause).isInstanceOf(AmqpException.AmqpSecurityException.class)
                .hasMessageContaining(refused("ivan", "ursula"));
            assertThat(publish(other, "ursula")).isEqualTo(Publisher.Status.ACCEPTED);
        }
    }

    /** Frame by frame: settled or not, the link is detached (closed) with no disposition for the message. */
    @Test
    void theDetachComesWithoutADispositionSettledOrNot() throws Exception {
        broker.vhost("/").declareQueue("user-id-raw");
        for (boolean settled : new boolean[] {true, false}) {
            try (RawClient client = new RawClient(broker.port())) {
                assertThat(client.sasl("ursula", "pw")).isZero();
                client.open();
                client.begin();
                client.attachSender(0, "/queues/user-id-raw");
                client.readUntil(Flow.class);
                client.transfer(0, 0, withUserId("mallory"), settled);
                List<Object> frames = new ArrayList<>();
                Object frame;
                do {
                    frame = client.read().body();
                    frames.add(frame);
                } while (!(frame instanceof Detach));
                assertThat(frames).as("settled: " + settled).hasSize(1);
                Detach detach = (Detach) frame;
                assertThat(detach.getClosed()).isTrue();
                assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
                assertThat(detach.getError().getDescription()).isEqualTo(refused("mallory", "ursula"));
            }
        }
        assertThat(broker.vhost("/").queue("user-id-raw").readyCount()).as("nothing forged was queued").isZero();
    }

    private static byte[] withUserId(String userId) {
        Message message = Message.Factory.create();
        Properties properties = new Properties();
        properties.setUserId(new Binary(userId.getBytes(StandardCharsets.UTF_8)));
        message.setProperties(properties);
        message.setBody(new Data(new Binary("forged".getBytes(StandardCharsets.UTF_8))));
        return Messages.encode(message);
    }

    // ---- the HTTP API -------------------------------------------------------------------------------------------

    private static HttpApiClient.Answer httpPublish(String user, String claimed) throws Exception {
        return new HttpApiClient(broker.managementPort(), user, "pw").post("/api/exchanges/%2F/amq.default/publish",
            Map.of("routing_key", QUEUE, "properties", Map.of("user_id", claimed), "payload", "p",
                "payload_encoding", "string"));
    }

    @Test
    void theHttpApisPublishChecksTheUserIdToo() throws Exception {
        broker.admin().putUser("ursula-web", "pw", List.of("management"));
        broker.admin().setPermissions("ursula-web", "/", ".*", ".*", ".*");
        broker.admin().putUser("ivan-web", "pw", List.of("management", "impersonator"));
        broker.admin().setPermissions("ivan-web", "/", ".*", ".*", ".*");
        HttpApiClient.Answer refusedPublish = httpPublish("ursula-web", "ivan-web");
        assertThat(refusedPublish.status()).isEqualTo(400);
        assertThat(refusedPublish.map().get("reason")).isEqualTo(refused("ivan-web", "ursula-web"));
        HttpApiClient.Answer impersonated = httpPublish("ivan-web", "ursula-web");
        assertThat(impersonated.status()).isEqualTo(200);
        assertThat(impersonated.map()).containsEntry("routed", true);
    }
}
