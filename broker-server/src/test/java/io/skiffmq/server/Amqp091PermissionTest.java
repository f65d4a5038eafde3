package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every 0-9-1 method that needs a permission, allowed once and refused once, with RabbitMQ's 403 ACCESS_REFUSED
 * channel error and text (https://www.rabbitmq.com/docs/access-control, "How Permissions Work"). alice may
 * configure {@code ok-*}, write {@code ok-*}, {@code wo-*}, {@code amq.default} and {@code amq.topic}, and read
 * {@code ok-*}, {@code ro-*} and {@code amq.topic}; guest declares the rest.
 */
@ExtendWith(LeakDetection.class)
class Amqp091PermissionTest {
    private static RunningBroker broker;
    private Connection alice;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        grantsAndResources(broker, List.of("management"));
    }

    /**
     * The grants both protocols' permission tests use: alice configures {@code ok-*}, writes {@code ok-*} and
     * {@code wo-*}, reads {@code ok-*} and {@code ro-*}; mute may write nothing. And the queues and exchanges
     * {@code ro-}, {@code wo-} and {@code no-} they are tried on, declared by guest.
     */
    static void grantsAndResources(RunningBroker broker, List<String> aliceTags) throws Exception {
        Admin admin = broker.admin();
        admin.putUser("alice", "pw", aliceTags);
        admin.setPermissions("alice", "/", "^ok-", "^(ok|wo)-|^amq\\.(default|topic)$", "^(ok|ro)-|^amq\\.topic$");
        admin.putUser("mute", "pw", List.of());
        admin.setPermissions("mute", "/", ".*", "^$", ".*");
        try (Connection guest = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            Channel channel = guest.createChannel();
            for (String queue : List.of("ro-q", "wo-q", "no-q")) {
                channel.queueDeclare(queue, false, false, false, null);
            }
            for (String exchange : List.of("ro-x", "wo-x", "no-x")) {
                channel.exchangeDeclare(exchange, "direct");
            }
        }
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @BeforeEach
    void connect() throws Exception {
        alice = VirtualHostTest.factory(broker, "/", "alice", "pw").newConnection();
    }

    @AfterEach
    void disconnect() throws Exception {
        alice.close();
    }

    private static String refused(String permission, String kind, String name) {
        return "ACCESS_REFUSED - " + permission + " access to " + kind + " '" + name
            + "' in vhost '/' refused for user 'alice'";
    }

    @Test
    void queueDeclareNeedsConfigure() throws Exception {
        Channel channel = alice.createChannel();
        assertThat(channel.queueDeclare("ok-declared", false, false, true, null).getQueue()).isEqualTo("ok-declared");
        channelError(channel, 403, refused("configure", "queue", "no-new"),
            () -> channel.queueDeclare("no-new", false, false, false, null));
    }

    @Test
    void aServerNamedQueueIsCheckedUnderItsGeneratedName() throws Exception {
        Channel channel = alice.createChannel();
        channelError(channel, 403, "ACCESS_REFUSED - configure access to queue 'amq.gen-",
            () -> channel.queueDeclare());
    }

    @Test
    void passiveDeclarationsNeedNothing() throws Exception {
        Channel channel = alice.createChannel();
        channel.queueDeclarePassive("no-q");
        channel.exchangeDeclarePassive("no-x");
    }

    @Test
    void queueDeleteNeedsConfigure() throws Exception {
        Channel channel = alice.createChannel();
        channel.queueDeclare("ok-doomed", false, false, false, null);
        channel.queueDelete("ok-doomed");
        channelError(channel, 403, refused("configure", "queue", "ro-q"), () -> channel.queueDelete("ro-q"));
    }

    @Test
    void exchangeDeclareAndDeleteNeedConfigure() throws Exception {
        Channel channel = alice.createChannel();
        channel.exchangeDeclare("ok-x", "fanout");
        channel.exchangeDelete("ok-x");
        channelError(channel, 403, refused("configure", "exchange", "no-new-x"),
            () -> channel.exchangeDeclare("no-new-x", "fanout"));
        Channel second = alice.createChannel();
        channelError(second, 403, refused("configure", "exchange", "ro-x"), () -> second.exchangeDelete("ro-x"));
    }

    @Test
    void anAlternateExchangeNeedsWriteAndADeadLetterExchangeToo() throws Exception {
        Channel channel = alice.createChannel();
        channel.exchangeDeclare("ok-with-ae", "direct", false, true, java.util.Map.of("alternate-exchange", "wo-x"));
        channel.queueDeclare("ok-with-dlx", false, false, true, java.util.Map.of("x-dead-letter-exchange", "wo-x"));
        channelError(channel, 403, refused("write", "exchange", "ro-x"), () -> channel.exchangeDeclare("ok-ae-refused",
            "direct", false, true, java.util.Map.of("alternate-exchange", "ro-x")));
        Channel second = alice.createChannel();
        channelError(second, 403, refused("write", "exchange", "ro-x"), () -> second.queueDeclare("ok-dlx-refused",
            false, false, true, java.util.Map.of("x-dead-letter-exchange", "ro-x")));
    }

    @Test
    void queueBindAndUnbindNeedWriteOnTheQueueAndReadOnTheExchange() throws Exception {
        Channel channel = alice.createChannel();
        channel.queueBind("wo-q", "ro-x", "k");
        channel.queueUnbind("wo-q", "ro-x", "k");
        channelError(channel, 403, refused("write", "queue", "ro-q"), () -> channel.queueBind("ro-q", "ro-x", "k"));
        Channel second = alice.createChannel();
        channelError(second, 403, refused("read", "exchange", "wo-x"), () -> second.queueBind("wo-q", "wo-x", "k"));
        Channel third = alice.createChannel();
        channelError(third, 403, refused("write", "queue", "ro-q"), () -> third.queueUnbind("ro-q", "ro-x", "k"));
    }

    @Test
    void exchangeBindNeedsWriteOnTheDestinationAndReadOnTheSource() throws Exception {
        Channel channel = alice.createChannel();
        channel.exchangeBind("wo-x", "ro-x", "k");
        channel.exchangeUnbind("wo-x", "ro-x", "k");
        channelError(channel, 403, refused("write", "exchange", "ro-x"),
            () -> channel.exchangeBind("ro-x", "ro-x", "k"));
        Channel second = alice.createChannel();
        channelError(second, 403, refused("read", "exchange", "no-x"),
            () -> second.exchangeBind("wo-x", "no-x", "k"));
    }

    @Test
    void publishNeedsWriteOnTheExchange() throws Exception {
        Channel channel = alice.createChannel();
        channel.confirmSelect();
        channel.basicPublish("", "wo-q", null, bytes("to the default exchange"));
        channel.waitForConfirmsOrDie(5_000);
        channel.basicPublish("ro-x", "k", null, bytes("refused"));
        awaitChannelError(channel, 403, refused("write", "exchange", "ro-x"));
    }

    @Test
    void theDefaultExchangeIsCheckedAsAmqDefaultAndCaretDollarGrantsNothing() throws Exception {
        try (Connection mute = VirtualHostTest.factory(broker, "/", "mute", "pw").newConnection()) {
            Channel channel = mute.createChannel();
            channel.basicPublish("", "wo-q", null, bytes("refused"));
            awaitChannelError(channel, 403,
                "ACCESS_REFUSED - write access to exchange 'amq.default' in vhost '/' refused for user 'mute'");
        }
    }

    @Test
    void consumeGetAndPurgeNeedRead() throws Exception {
        Channel channel = alice.createChannel();
        channel.basicConsume("ro-q", true, new DefaultConsumer(channel));
        channel.basicGet("ro-q", true);
        channel.queuePurge("ro-q");
        channelError(channel, 403, refused("read", "queue", "wo-q"),
            () -> channel.basicConsume("wo-q", true, new DefaultConsumer(channel)));
        Channel second = alice.createChannel();
        channelError(second, 403, refused("read", "queue", "wo-q"), () -> second.basicGet("wo-q", true));
        Channel third = alice.createChannel();
        channelError(third, 403, refused("read", "queue", "wo-q"), () -> third.queuePurge("wo-q"));
    }

    @Test
    void topicPermissionsCheckTheRoutingKeyWithTheUserNameExpanded() throws Exception {
        broker.admin().setTopicPermissions("alice", "/", "amq.topic", "^{username}\\.", "^{username}\\.");
        try {
            Channel channel = alice.createChannel();
            channel.queueBind("wo-q", "amq.topic", "alice.#");
            channelError(channel, 403, "ACCESS_REFUSED - read access to topic 'bob.#' in exchange 'amq.topic' in "
                + "vhost '/' refused for user 'alice'", () -> channel.queueBind("wo-q", "amq.topic", "bob.#"));
            Channel publisher = alice.createChannel();
            publisher.confirmSelect();
            publisher.basicPublish("amq.topic", "alice.news", null, bytes("mine"));
            publisher.waitForConfirmsOrDie(5_000);
            publisher.basicPublish("amq.topic", "bob.news", null, bytes("not mine"));
            awaitChannelError(publisher, 403, "ACCESS_REFUSED - write access to topic 'bob.news' in exchange "
                + "'amq.topic' in vhost '/' refused for user 'alice'");
        } finally {
            broker.admin().clearTopicPermissions("alice", "/");
        }
    }

    @Test
    void theKeysACcOrBccHeaderNamesNeedTheTopicPermissionToo() throws Exception {
        broker.admin().setTopicPermissions("alice", "/", "amq.topic", "^{username}\\.", "^{username}\\.");
        try {
            for (String header : List.of("CC", "BCC")) {
                Channel publisher = alice.createChannel();
                publisher.basicPublish("amq.topic", "alice.news", new com.rabbitmq.client.AMQP.BasicProperties
                    .Builder().headers(java.util.Map.of(header, List.of("alice.more", "bob.news"))).build(),
                    bytes("copied"));
                awaitChannelError(publisher, 403, "ACCESS_REFUSED - write access to topic 'bob.news' in exchange "
                    + "'amq.topic' in vhost '/' refused for user 'alice'");
            }
        } finally {
            broker.admin().clearTopicPermissions("alice", "/");
        }
    }

    @Test
    void aPermissionChangeAppliesToAnOpenConnection() throws Exception {
        Channel channel = alice.createChannel();
        channel.queueDeclare("ok-changing", false, false, true, null);
        broker.admin().setPermissions("alice", "/", "^other-", "^(ok|wo)-|^amq\\.(default|topic)$",
            "^(ok|ro)-|^amq\\.topic$");
        try {
            channelError(channel, 403, refused("configure", "queue", "ok-changing"),
                () -> channel.queueDelete("ok-changing"));
        } finally {
            broker.admin().setPermissions("alice", "/", "^ok-", "^(ok|wo)-|^amq\\.(default|topic)$",
                "^(ok|ro)-|^amq\\.topic$");
        }
    }
}
