package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.auth.UserStore;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.store.definitions.BrokerDefinitionsStore;
import io.skiffmq.store.definitions.ChangeLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.transport.Close;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Virtual hosts end to end: two of them keep same-named queues apart over both protocols; a missing one or one the
 * user has no permissions on is refused with RabbitMQ's answers; deleting one closes its connections and removes its
 * state; and the definitions (virtual hosts, users with tags, permissions, limits) survive a restart.
 */
@ExtendWith(LeakDetection.class)
class VirtualHostTest {
    @TempDir
    Path dir;

    static ConnectionFactory factory(RunningBroker broker, String vhost, String user, String password) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setVirtualHost(vhost);
        factory.setUsername(user);
        factory.setPassword(password);
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    private static void publishConfirmed(Channel channel, String queue, String body) throws Exception {
        channel.confirmSelect();
        channel.basicPublish("", queue, MessageProperties.PERSISTENT_BASIC, bytes(body));
        channel.waitForConfirmsOrDie(5_000);
    }

    @Test
    void sameNamedQueuesInTwoVirtualHostsKeepTheirMessagesApartOver091() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().createVhost("team-a");
            broker.admin().setPermissions("guest", "team-a", ".*", ".*", ".*");
            try (Connection root = factory(broker, "/", "guest", "guest").newConnection();
                 Connection teamA = factory(broker, "team-a", "guest", "guest").newConnection()) {
                Channel r = root.createChannel();
                Channel a = teamA.createChannel();
                r.queueDeclare("shared", true, false, false, null);
                a.queueDeclare("shared", true, false, false, null);
                publishConfirmed(r, "shared", "for root");
                publishConfirmed(a, "shared", "for team-a");
                assertThat(text(r.basicGet("shared", true).getBody())).isEqualTo("for root");
                assertThat(r.basicGet("shared", true)).isNull();
                assertThat(text(a.basicGet("shared", true).getBody())).isEqualTo("for team-a");
                assertThat(a.basicGet("shared", true)).isNull();
            }
        }
    }

    private static Environment environment(RunningBroker broker, String vhost) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .virtualHost(vhost).username("guest").password("guest").environmentBuilder().build();
    }

    @Test
    void sameNamedQueuesInTwoVirtualHostsKeepTheirMessagesApartOverAmqp10() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().createVhost("team-b");
            broker.admin().setPermissions("guest", "team-b", ".*", ".*", ".*");
            try (Environment rootEnv = environment(broker, "/"); Environment teamEnv = environment(broker, "team-b")) {
                com.rabbitmq.client.amqp.Connection root = rootEnv.connectionBuilder().build();
                com.rabbitmq.client.amqp.Connection team = teamEnv.connectionBuilder().build();
                root.management().queue("shared10").declare();
                team.management().queue("shared10").declare();
                publish(root, "shared10", "for root");
                publish(team, "shared10", "for team-b");
                assertThat(root.management().queueInfo("shared10").messageCount()).isEqualTo(1);
                assertThat(receiveOne(root, "shared10")).isEqualTo("for root");
                assertThat(receiveOne(team, "shared10")).isEqualTo("for team-b");
                assertThat(broker.vhost("team-b").queue("shared10")).isNotSameAs(broker.vhost("/").queue("shared10"));
            }
        }
    }

    private static void publish(com.rabbitmq.client.amqp.Connection connection, String queue, String body)
            throws Exception {
        Publisher publisher = connection.publisherBuilder().queue(queue).build();
        CountDownLatch settled = new CountDownLatch(1);
        Publisher.Status[] status = new Publisher.Status[1];
        publisher.publish(publisher.message(body.getBytes(StandardCharsets.UTF_8)), context -> {
            status[0] = context.status();
            settled.countDown();
        });
        assertThat(settled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(status[0]).isEqualTo(Publisher.Status.ACCEPTED);
        publisher.close();
    }

    private static String receiveOne(com.rabbitmq.client.amqp.Connection connection, String queue) throws Exception {
        List<String> bodies = new CopyOnWriteArrayList<>();
        var consumer = connection.consumerBuilder().queue(queue).messageHandler((context, message) -> {
            bodies.add(new String(message.body(), StandardCharsets.UTF_8));
            context.accept();
        }).build();
        await().atMost(TIMEOUT).until(() -> !bodies.isEmpty());
        consumer.close();
        return bodies.get(0);
    }

    @Test
    void aMissingVirtualHostAndOneWithoutPermissionsAreRefusedOver091() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().createVhost("closed");
            AMQP.Connection.Close missing = openRefused(factory(broker, "nope", "guest", "guest"));
            assertThat(missing.getReplyCode()).isEqualTo(530);
            assertThat(missing.getReplyText()).isEqualTo("NOT_ALLOWED - vhost nope not found");
            AMQP.Connection.Close refused = openRefused(factory(broker, "closed", "guest", "guest"));
            assertThat(refused.getReplyCode()).isEqualTo(530);
            assertThat(refused.getReplyText())
                .isEqualTo("NOT_ALLOWED - access to vhost 'closed' refused for user 'guest'");
        }
    }

    static AMQP.Connection.Close openRefused(ConnectionFactory factory) {
        Throwable thrown = catchThrowable(() -> factory.newConnection().close());
        assertThat(thrown).isNotNull();
        ShutdownSignalException signal = Amqp091Support.signal(thrown);
        return (AMQP.Connection.Close) signal.getReason();
    }

    @Test
    void aVirtualHostWithoutPermissionsIsRefusedOverAmqp10AndAPlainHostnameMeansTheDefault() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().createVhost("closed");
            try (RawClient client = new RawClient(broker.port())) {
                client.sasl("guest", "guest");
                client.open("vhost:closed");
                Close close = client.read().as(Close.class);
                assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
                assertThat(close.getError().getDescription())
                    .isEqualTo("access to vhost 'closed' refused for user 'guest'");
            }
            try (RawClient client = new RawClient(broker.port())) {
                client.sasl("guest", "guest");
                client.open("localhost"); // not "vhost:…": the default virtual host, as in RabbitMQ 4
                client.begin();
                client.attachSender(0, "/queues/default-host");
                assertThat(broker.vhost("/").queue("default-host")).isNull(); // v2 addresses do not create
            }
        }
    }

    @Test
    void deletingAVirtualHostClosesItsConnectionsAndRemovesItsQueuesAndMessages() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            Admin admin = broker.admin();
            admin.createVhost("doomed");
            admin.setPermissions("guest", "doomed", ".*", ".*", ".*");
            Path directory = broker.dataDir().resolve("vhosts").resolve("doomed");
            // closed by the deletion, so not closed by the test
            Connection connection = factory(broker, "doomed", "guest", "guest").newConnection();
            try (Connection bystander = factory(broker, "/", "guest", "guest").newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare("kept", true, false, false, null);
                publishConfirmed(channel, "kept", "stored");
                assertThat(Files.exists(directory.resolve("definitions.log"))).isTrue();

                assertThat(admin.deleteVhost("doomed")).isTrue();

                await().atMost(TIMEOUT).until(() -> !connection.isOpen());
                AMQP.Connection.Close close = (AMQP.Connection.Close) connection.getCloseReason().getReason();
                assertThat(close.getReplyCode()).isEqualTo(320);
                assertThat(close.getReplyText()).isEqualTo("CONNECTION_FORCED - virtual host 'doomed' is deleted");
                assertThat(bystander.isOpen()).isTrue();
            }
            assertThat(Files.exists(directory)).isFalse();
            assertThat(admin.vhosts()).containsExactly("/");
            assertThat(openRefused(factory(broker, "doomed", "guest", "guest")).getReplyText())
                .isEqualTo("NOT_ALLOWED - vhost doomed not found");

            admin.createVhost("doomed");
            admin.setPermissions("guest", "doomed", ".*", ".*", ".*");
            try (Connection again = factory(broker, "doomed", "guest", "guest").newConnection()) {
                Channel channel = again.createChannel();
                Amqp091Support.channelError(channel, 404, "NOT_FOUND - no queue 'kept' in vhost 'doomed'",
                    () -> channel.queueDeclarePassive("kept"));
            }
        }
    }

    @Test
    void aVirtualHostCreatedAgainAfterADeletionACrashInterruptedStartsEmpty() throws Exception {
        String[] settings = {"data-dir=" + dir.resolve("data")};
        try (RunningBroker broker = RunningBroker.start(settings)) {
            broker.admin().createVhost("ghost");
            broker.admin().setPermissions("guest", "ghost", ".*", ".*", ".*");
            try (Connection connection = factory(broker, "ghost", "guest", "guest").newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare("haunted", true, false, false, null);
                publishConfirmed(channel, "haunted", "left behind");
            }
        }
        // the crash came after the definitions lost the virtual host and before its directory went
        try (BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir.resolve("data"),
                ChangeLog.Compaction.DEFAULTS, () -> null)) {
            store.append(List.of(new VhostDeleted("ghost"))).join();
        }
        assertThat(Files.exists(dir.resolve("data").resolve("vhosts").resolve("ghost"))).isTrue();
        try (RunningBroker broker = RunningBroker.start(settings)) {
            assertThat(broker.vhost("ghost")).isNull();
            broker.admin().createVhost("ghost");
            assertThat(broker.vhost("ghost").queue("haunted")).isNull();
        }
    }

    @Test
    void deletingAUserClosesItsConnectionsOnBothProtocolsAndItCannotLogInAgain() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().putUser("temp", "pw", List.of("management"));
            broker.admin().setPermissions("temp", "/", ".*", ".*", ".*");
            Connection connection = factory(broker, "/", "temp", "pw").newConnection();
            try (RawClient client = new RawClient(broker.port())) {
                assertThat(client.sasl("temp", "pw")).isZero();
                client.open();
                assertThat(broker.admin().deleteUser("temp")).isTrue();
                Close close = client.readUntil(Close.class);
                assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.CONNECTION_FORCED.symbol());
                assertThat(close.getError().getDescription()).isEqualTo("Connection forced: user 'temp' is deleted");
            }
            await().atMost(TIMEOUT).until(() -> !connection.isOpen());
            assertThat(((AMQP.Connection.Close) connection.getCloseReason().getReason()).getReplyText())
                .isEqualTo("CONNECTION_FORCED - user 'temp' is deleted");
            assertThat(catchThrowable(() -> factory(broker, "/", "temp", "pw").newConnection())).isNotNull();
            assertThat(broker.admin().definitions().permissions()).noneMatch(p -> p.user().equals("temp"));
        }
    }

    @Test
    void definitionsSurviveARestart() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "alice:" + UserStore.hash("s3cret") + "\n");
        String[] settings = {"data-dir=" + dir.resolve("data"), "users-file=" + users};
        try (RunningBroker broker = RunningBroker.start(settings)) {
            Admin admin = broker.admin();
            admin.createVhost("kept");
            admin.putUser("carol", "pa55", List.of("monitoring", "custom-tag"));
            admin.setPermissions("carol", "kept", "^carol-", ".*", ".*");
            admin.setTopicPermissions("carol", "kept", "amq.topic", "^carol\\.", ".*");
            admin.setVhostLimits("kept", 5, 10);
            admin.setUserLimits("carol", 3, 7);
            try (Connection connection = factory(broker, "kept", "carol", "pa55").newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare("carol-q", true, false, false, null);
                publishConfirmed(channel, "carol-q", "durable");
            }
        }
        try (RunningBroker broker = RunningBroker.start(settings)) {
            BrokerDefinitions definitions = broker.admin().definitions();
            assertThat(definitions.vhosts()).contains(new BrokerDefinitions.VhostDefinition("kept", 5, 10));
            BrokerDefinitions.UserDefinition carol = broker.accessControl().user("carol");
            assertThat(carol.tags()).containsExactly("monitoring", "custom-tag");
            assertThat(carol.hashingAlgorithm()).isEqualTo("rabbit_password_hashing_sha256");
            assertThat(carol.maxConnections()).isEqualTo(3);
            assertThat(carol.maxChannels()).isEqualTo(7);
            assertThat(definitions.permissions())
                .contains(new BrokerDefinitions.PermissionDefinition("carol", "kept", "^carol-", ".*", ".*"));
            assertThat(definitions.topicPermissions()).contains(
                new BrokerDefinitions.TopicPermissionDefinition("carol", "kept", "amq.topic", "^carol\\.", ".*"));
            assertThat(broker.accessControl().user("guest").tags()).containsExactly("administrator");
            assertThat(broker.accessControl().user("alice")).as("seeded from the users file").isNotNull();
            try (Connection connection = factory(broker, "kept", "carol", "pa55").newConnection()) {
                GetResponse got = connection.createChannel().basicGet("carol-q", true);
                assertThat(text(got.getBody())).isEqualTo("durable");
            }
            try (Connection alice = factory(broker, "/", "alice", "s3cret").newConnection()) {
                assertThat(alice.isOpen()).isTrue();
            }
        }
    }
}
