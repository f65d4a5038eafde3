package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Permissions over AMQP 1.0, as RabbitMQ 4 checks them: write on a publisher link's target exchange (a queue
 * target goes through the default exchange: {@code amq.default}), read on a consumer link's source queue,
 * configure on a queue an address creates, write per message on the anonymous relay, topic permissions per routing
 * key, and the {@code /management} node's declare, delete, purge and bind. A refused link is detached with
 * {@code amqp:unauthorized-access}; a refused management request is 403. Same grants as
 * {@link Amqp091PermissionTest}.
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

    private static void assertDetached(RawClient client, String description) throws Exception {
        Detach detach = client.readUntil(Detach.class);
        assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
        assertThat(detach.getError().getDescription()).isEqualTo(description);
    }

    @Test
    void aPublisherLinkNeedsWriteOnItsTargetExchange() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachSender(0, "/exchanges/wo-x").getTarget()).isNotNull();
            client.readUntil(Flow.class);
            Attach refusal = client.attachSender(1, "/exchanges/ro-x");
            assertThat(refusal.getTarget()).isNull();
            assertDetached(client, refused("alice", "write", "exchange", "ro-x"));
        }
    }

    @Test
    void aQueueTargetNeedsWriteOnTheDefaultExchange() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachSender(0, "/queues/ro-q").getTarget()).isNotNull();
        }
        try (RawClient client = session("mute")) {
            client.attachSender(0, "/queues/ro-q");
            assertDetached(client, refused("mute", "write", "exchange", "amq.default"));
        }
    }

    @Test
    void aConsumerLinkNeedsReadOnItsSourceQueue() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachReceiver(0, RawClient.source("/queues/ro-q"), false).getSource()).isNotNull();
            assertThat(client.attachReceiver(1, RawClient.source("/queues/wo-q"), false).getSource()).isNull();
            assertDetached(client, refused("alice", "read", "queue", "wo-q"));
        }
    }

    @Test
    void aQueueCreatedThroughAnAddressNeedsConfigure() throws Exception {
        try (RawClient client = session("alice")) {
            assertThat(client.attachReceiver(0, RawClient.source("/queue/ok-created"), false).getSource())
                .isNotNull();
            assertThat(broker.vhost("/").queue("ok-created")).isNotNull();
            client.attachReceiver(1, RawClient.source("/queue/ro-created"), false);
            assertDetached(client, refused("alice", "configure", "queue", "ro-created"));
            assertThat(broker.vhost("/").queue("ro-created")).isNull();
        }
    }

    @Test
    void aJmsTopicConsumerNeedsConfigureOnTheQueueItGets() throws Exception {
        try (RawClient client = session("alice")) {
            org.apache.qpid.proton.amqp.messaging.Source topic = RawClient.source("alice.news");
            topic.setCapabilities(org.apache.qpid.proton.amqp.Symbol.valueOf("topic"));
            assertThat(client.attachReceiver(0, topic, false).getSource()).isNull();
            Detach detach = client.readUntil(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
            assertThat(detach.getError().getDescription()).startsWith("configure access to queue 'amq.gen-")
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
            assertDetached(client, refused("alice", "write", "exchange", "ro-x"));
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
            assertDetached(client, "write access to topic 'bob.news' in exchange 'amq.topic' in vhost '/' refused "
                + "for user 'alice'");
        }
    }

    @Test
    void managementOperationsNeedTheirPermissions() throws Exception {
        try (Environment environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                .port(broker.port()).username("alice").password("pw").environmentBuilder().build()) {
            Management management = environment.connectionBuilder().build().management();
            management.queue("ok-managed").declare();
            assertRefused(() -> management.queue("no-managed").declare(),
                refused("alice", "configure", "queue", "no-managed"));
            management.queueDelete("ok-managed");
            assertRefused(() -> management.queueDelete("ro-q"), refused("alice", "configure", "queue", "ro-q"));
            management.exchange("ok-mx").type(Management.ExchangeType.FANOUT).declare();
            management.exchangeDelete("ok-mx");
            assertRefused(() -> management.exchangeDelete("ro-x"), refused("alice", "configure", "exchange", "ro-x"));
            management.queuePurge("ro-q");
            assertRefused(() -> management.queuePurge("wo-q"), refused("alice", "read", "queue", "wo-q"));
            management.binding().sourceExchange("ro-x").destinationQueue("wo-q").key("k").bind();
            management.unbind().sourceExchange("ro-x").destinationQueue("wo-q").key("k").unbind();
            assertRefused(() -> management.binding().sourceExchange("wo-x").destinationQueue("wo-q").key("k").bind(),
                refused("alice", "read", "exchange", "wo-x"));
            assertRefused(() -> management.binding().sourceExchange("ro-x").destinationQueue("ro-q").key("k").bind(),
                refused("alice", "write", "queue", "ro-q"));
        }
    }

    private static void assertRefused(Runnable operation, String description) {
        Throwable thrown = catchThrowable(operation::run);
        assertThat(thrown).isNotNull();
        assertThat(thrown.getMessage()).contains(description);
    }
}
