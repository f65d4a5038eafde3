package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import com.rabbitmq.qpid.protonj2.client.exceptions.ClientSessionRemotelyClosedException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import java.util.List;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.jms.JmsOperationTimedOutException;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Permissions over AMQP 1.0, as RabbitMQ 4 checks them: write on a publisher link's target exchange (a queue
 * target goes through the default exchange: {@code amq.default}), read on a consumer link's source queue,
 * configure on a queue an address creates, write per message on the anonymous relay, topic permissions per routing
 * key, and the {@code /management} node's declare, delete, purge and bind. Every refusal ends the session with
 * {@code amqp:unauthorized-access} and RabbitMQ's text, as RabbitMQ 4's {@code rabbit_amqp_session} raises it (a
 * {@code protocol_error}): the refused attach gets no answer, the session's other links go with it, and the
 * connection goes on. Same grants as {@link Amqp091PermissionTest}.
 */
@ExtendWith(LeakDetection.class)
class Amqp10PermissionTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        Amqp091PermissionTest.grantsAndResources(broker, List.of());
        broker.admin().setTopicPermissions("alice", "/", "amq.topic", "^{username}\\.", ".*");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static RawClient session(String user) throws Exception {
        RawClient client = new RawClient(broker.port());
        assertThat(client.sasl(user, "pw")).isZero();
        client.open();
        client.begin();
        return client;
    }

    private static String refused(String user, String permission, String kind, String name) {
        return permission + " access to " + kind + " '" + name + "' in vhost '/' refused for user '" + user + "'";
    }

    /**
     * {@code end} ends the session with {@code unauthorized-access} and {@code description}; the connection goes on:
     * once the end exchange completes, a session begins again on the same channel.
     */
    private static void assertSessionEnded(RawClient client, Object end, String description) throws Exception {
        assertThat(end).isInstanceOf(End.class);
        assertThat((Object) ((End) end).getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
        assertThat(((End) end).getError().getDescription()).isEqualTo(description);
        client.write(0, new End());
        client.begin();
    }

    @Test
    void aPublisherLinkNeedsWriteOnItsTargetExchange() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachSender(0, "/exchanges/wo-x").getTarget()).isNotNull();
            client.readUntil(Flow.class);
            // no attach in answer: the session ends, with the link attached before
            assertSessionEnded(client, client.attachSenderAnswer(1, "/exchanges/ro-x", SenderSettleMode.MIXED).body(),
                refused("alice", "write", "exchange", "ro-x"));
            assertThat(client.attachSender(0, "/exchanges/wo-x").getTarget()).as("handle 0 is free again").isNotNull();
        }
    }

    @Test
    void aQueueTargetNeedsWriteOnTheDefaultExchange() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachSender(0, "/queues/ro-q").getTarget()).isNotNull();
        }
        try (RawClient client = session("mute")) {
            assertSessionEnded(client, client.attachSenderAnswer(0, "/queues/ro-q", SenderSettleMode.MIXED).body(),
                refused("mute", "write", "exchange", "amq.default"));
        }
    }

    @Test
    void aConsumerLinkNeedsReadOnItsSourceQueue() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachReceiver(0, RawClient.source("/queues/ro-q"), false).getSource()).isNotNull();
            assertSessionEnded(client, client.attachReceiverAnswer(1, RawClient.source("/queues/wo-q"), false).body(),
                refused("alice", "read", "queue", "wo-q"));
            assertThat(broker.vhost("/").queue("ro-q").consumerCount()).as("the session's consumer went with it")
                .isZero();
        }
    }

    @Test
    void aQueueCreatedThroughAnAddressNeedsConfigure() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachReceiver(0, RawClient.source("/queue/ok-created"), false).getSource())
                .isNotNull();
            assertThat(broker.vhost("/").queue("ok-created")).isNotNull();
            assertSessionEnded(client,
                client.attachReceiverAnswer(1, RawClient.source("/queue/ro-created"), false).body(),
                refused("alice", "configure", "queue", "ro-created"));
            assertThat(broker.vhost("/").queue("ro-created")).isNull();
        }
    }

    @Test
    void aJmsTopicConsumerNeedsConfigureOnTheQueueItGets() throws Exception {
        try (RawClient client = session("alice")) {
            org.apache.qpid.proton.amqp.messaging.Source topic = RawClient.source("alice.news");
            topic.setCapabilities(org.apache.qpid.proton.amqp.Symbol.valueOf("topic"));
            End end = client.attachReceiverAnswer(0, topic, false).as(End.class);
            assertThat((Object) end.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
            assertThat(end.getError().getDescription()).startsWith("configure access to queue 'amq.gen-")
                .endsWith("' in vhost '/' refused for user 'alice'");
        }
    }

    @Test
    void theAnonymousRelayChecksEachMessagesDestination() throws Exception {
        try (RawClient client = session("alice")) {
            client.attachSender(0, null);
            client.readUntil(Flow.class);
            client.transfer(0, 0, Messages.data("allowed", "/exchanges/wo-x/k"), false);
            // allowed: it went nowhere (nothing is bound), so it is released, not refused
            assertThat(client.readUntil(Disposition.class).getState()).isInstanceOf(Released.class);
            client.transfer(0, 1, Messages.data("refused", "/exchanges/ro-x/k"), false);
            assertSessionEnded(client, client.read().body(), refused("alice", "write", "exchange", "ro-x"));
        }
    }

    @Test
    void topicPermissionsCheckEachMessagesRoutingKey() throws Exception {
        try (RawClient client = session("alice")) {
            client.attachSender(0, null);
            client.readUntil(Flow.class);
            client.transfer(0, 0, Messages.data("mine", "/exchanges/amq.topic/alice.news"), false);
            assertThat(client.readUntil(Disposition.class).getState()).isInstanceOf(Released.class);
            client.transfer(0, 1, Messages.data("not mine", "/exchanges/amq.topic/bob.news"), false);
            assertSessionEnded(client, client.read().body(), "write access to topic 'bob.news' in exchange 'amq.topic' "
                + "in vhost '/' refused for user 'alice'");
        }
    }

    private static Environment environment(String user) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username(user).password("pw").environmentBuilder().build();
    }

    /** The connection's management: asked of the connection each time, so it begins again after a refusal. */
    @Test
    void managementOperationsNeedTheirPermissions() throws Exception {
        try (Environment environment = environment("alice"); Connection c = environment.connectionBuilder().build()) {
            c.management().queue("ok-managed").declare();
            assertRefused(c, () -> c.management().queue("no-managed").declare(),
                refused("alice", "configure", "queue", "no-managed"));
            c.management().queueDelete("ok-managed");
            assertRefused(c, () -> c.management().queueDelete("ro-q"), refused("alice", "configure", "queue", "ro-q"));
            c.management().exchange("ok-mx").type(Management.ExchangeType.FANOUT).declare();
            c.management().exchangeDelete("ok-mx");
            assertRefused(c, () -> c.management().exchangeDelete("ro-x"),
                refused("alice", "configure", "exchange", "ro-x"));
            c.management().queuePurge("ro-q");
            assertRefused(c, () -> c.management().queuePurge("wo-q"), refused("alice", "read", "queue", "wo-q"));
            c.management().binding().sourceExchange("ro-x").destinationQueue("wo-q").key("k").bind();
            c.management().unbind().sourceExchange("ro-x").destinationQueue("wo-q").key("k").unbind();
            assertRefused(c, () -> c.management().binding().sourceExchange("wo-x").destinationQueue("wo-q").key("k")
                .bind(), refused("alice", "read", "exchange", "wo-x"));
            assertRefused(c, () -> c.management().binding().sourceExchange("ro-x").destinationQueue("ro-q").key("k")
                .bind(), refused("alice", "write", "queue", "ro-q"));
            // unbinding is checked whether the binding exists or not, as RabbitMQ checks it
            assertRefused(c, () -> c.management().unbind().sourceExchange("ro-x").destinationQueue("ro-q").key("none")
                .unbind(), refused("alice", "write", "queue", "ro-q"));
        }
    }

    @Test
    void aNewQueuesDeadLetterExchangeNeedsWrite() throws Exception {
        try (Environment environment = environment("alice"); Connection c = environment.connectionBuilder().build()) {
            assertRefused(c, () -> c.management().queue("ok-dead-lettered").deadLetterExchange("ro-x").declare(),
                refused("alice", "write", "exchange", "ro-x"));
            assertThat(broker.vhost("/").queue("ok-dead-lettered")).isNull();
            c.management().queue("ok-dead-lettered").deadLetterExchange("wo-x").declare();
            c.management().queueDelete("ok-dead-lettered");
        }
    }

    /** A queue's GET needs any of the three permissions on it, as RabbitMQ 4.3 checks it (its passive declare's). */
    @Test
    void gettingAQueueNeedsAnyPermissionOnIt() throws Exception {
        try (Environment environment = environment("alice"); Connection c = environment.connectionBuilder().build()) {
            assertThat(c.management().queueInfo("ro-q").name()).isEqualTo("ro-q");
            assertThat(c.management().queueInfo("wo-q").name()).isEqualTo("wo-q");
            assertRefused(c, () -> c.management().queueInfo("no-q"), refused("alice", "configure", "queue", "no-q"));
        }
    }

    /** As RabbitMQ checks a new exchange's alternate exchange: read on the exchange, write on the alternate. */
    @Test
    void aNewExchangesAlternateExchangeNeedsWrite() throws Exception {
        try (Environment environment = environment("alice"); Connection c = environment.connectionBuilder().build()) {
            assertRefused(c, () -> c.management().exchange("ok-alternated").argument("alternate-exchange", "ro-x")
                .declare(), refused("alice", "write", "exchange", "ro-x"));
            assertThat(broker.vhost("/").exchange("ok-alternated")).isNull();
            c.management().exchange("ok-alternated").argument("alternate-exchange", "wo-x").declare();
            c.management().exchangeDelete("ok-alternated");
        }
    }

    /** A binding's key is checked against the topic permissions whatever its destination, a queue or an exchange. */
    @Test
    void anExchangeBindingNeedsTopicReadOnItsKey() throws Exception {
        broker.admin().putUser("tess", "pw", List.of());
        broker.admin().setPermissions("tess", "/", ".*", ".*", ".*");
        broker.admin().setTopicPermissions("tess", "/", "amq.topic", ".*", "^tess\\.");
        try (Environment environment = environment("tess"); Connection c = environment.connectionBuilder().build()) {
            c.management().exchange("tess-x").type(Management.ExchangeType.FANOUT).declare();
            c.management().binding().sourceExchange("amq.topic").destinationExchange("tess-x").key("tess.k").bind();
            assertRefused(c, () -> c.management().binding().sourceExchange("amq.topic").destinationExchange("tess-x")
                .key("other.k").bind(), "read access to topic 'other.k' in exchange 'amq.topic' in vhost '/' refused "
                + "for user 'tess'");
            assertThat(broker.vhost("/").bindings().bindingsFrom("amq.topic")).noneMatch(b -> b.key().equals("other.k"));
            c.management().exchangeDelete("tess-x");
        }
    }

    /** The request's own errors come before the permission checks, as RabbitMQ orders them: 403, not a refusal. */
    @Test
    void reservedNamesAreRefusedBeforePermissions() throws Exception {
        try (Environment environment = environment("alice"); Connection c = environment.connectionBuilder().build()) {
            Management management = c.management();
            assertThatThrownBy(() -> management.exchangeDelete("amq.direct"))
                .hasMessageContaining("403").hasMessageContaining("exchange 'amq.direct' in vhost '/' starts with "
                    + "reserved prefix 'amq.'");
            assertThatThrownBy(() -> management.queue("amq.mine").declare())
                .hasMessageContaining("403").hasMessageContaining("queue 'amq.mine' in vhost '/' starts with "
                    + "reserved prefix 'amq.'");
            // the session is still there: a refusal would have ended it
            assertThat(management.queueInfo("ro-q").name()).isEqualTo("ro-q");
        }
    }

    /**
     * A refusal ends its session only: another session of the connection (Qpid JMS gives each JMS session one)
     * keeps its consumer, which gets what is published afterwards. Qpid JMS does not fail an attach pending when
     * its session ends (against RabbitMQ too), so the refused consumer's creation runs into the request timeout.
     */
    @Test
    void theConnectionsOtherSessionsGoOn() throws Exception {
        broker.vhost("/").queue("ro-q").purge().join();
        String uri = broker.amqpUri() + "?jms.requestTimeout=2000";
        try (jakarta.jms.Connection jms = new JmsConnectionFactory("alice", "pw", uri).createConnection()) {
            jms.start();
            Session working = jms.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = working.createConsumer(working.createQueue("ro-q"));
            Session refused = jms.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> refused.createConsumer(refused.createQueue("wo-q")))
                .isInstanceOf(JmsOperationTimedOutException.class);
            assertThatThrownBy(() -> refused.createQueue("wo-q")).cause()
                .hasMessageContaining(refused("alice", "read", "queue", "wo-q"));
            CreditTest.publish(broker.port(), "ro-q", 1, i -> Messages.data("after the refusal", null));
            jakarta.jms.Message received = consumer.receive(Amqp091Support.TIMEOUT.toMillis());
            assertThat(received).isNotNull();
            assertThat(new String(received.getBody(byte[].class))).isEqualTo("after the refusal");
        }
    }

    /** RabbitMQ's AMQP 1.0 Java client, as its own AuthorizationTest checks a refused publisher and consumer. */
    @Test
    void theRabbitMqClientSeesTheSessionEnd() throws Exception {
        try (Environment environment = environment("alice"); Connection connection = environment.connectionBuilder()
                .build()) {
            assertThatThrownBy(() -> connection.publisherBuilder().exchange("ro-x").build())
                .isInstanceOf(AmqpException.AmqpSecurityException.class)
                .hasMessageContaining(refused("alice", "write", "exchange", "ro-x"));
            // the whole session is closed: the next publisher of the connection's session sees the same error
            assertThatThrownBy(() -> connection.publisherBuilder().exchange("wo-x").build())
                .isInstanceOf(AmqpException.AmqpSecurityException.class)
                .hasMessageContaining(refused("alice", "write", "exchange", "ro-x"));
            // the connection goes on: its management has a session of its own
            assertThat(connection.management().queueInfo("ro-q").name()).isEqualTo("ro-q");
        }
        try (Environment environment = environment("alice"); Connection connection = environment.connectionBuilder()
                .build()) {
            assertThatThrownBy(() -> connection.consumerBuilder().queue("wo-q").messageHandler((context, message) -> {
            }).build())
                .isInstanceOf(AmqpException.AmqpSecurityException.class)
                .hasMessageContaining(refused("alice", "read", "queue", "wo-q"));
        }
    }

    /**
     * A refused request raises the session's error (its cause, the session's end), and the client's management
     * begins a new session on the next request, as RabbitMQ's AuthorizationTest expects.
     */
    private static void assertRefused(Connection connection, Runnable operation, String description) {
        assertThatThrownBy(operation::run).isInstanceOf(AmqpException.AmqpSecurityException.class)
            .hasMessageContaining(description).hasCauseInstanceOf(ClientSessionRemotelyClosedException.class);
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).ignoreExceptions()
            .until(() -> connection.management().queueInfo("ro-q") != null);
    }
}
