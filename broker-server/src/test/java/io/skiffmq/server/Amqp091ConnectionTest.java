package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.SaslConfig;
import com.rabbitmq.client.SaslMechanism;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.LongStringHelper;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Connection through the RabbitMQ Java client: server properties and capabilities, the SASL mechanisms (PLAIN,
 * AMQPLAIN, ANONYMOUS), failed logins and vhosts, tune negotiation, close both ways, heartbeats.
 * Raw-socket cases (silence, bad frames, headers) are in {@link Amqp091FramingTest}.
 */
@ExtendWith(LeakDetection.class)
class Amqp091ConnectionTest {
    private static Amqp091Target target;

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    /** The {@code version} server property starts with "3." on a RabbitMQ 3.x checked against. */
    private static boolean rabbitMq3(Connection connection) {
        return target.external() && connection.getServerProperties().get("version").toString().startsWith("3.");
    }

    @Test
    void serverPropertiesNameTheProductAndListRabbitMqsCapabilities() throws Exception {
        try (Connection connection = target.factory().newConnection()) {
            Map<String, Object> properties = connection.getServerProperties();
            assertThat(properties.get("product")).hasToString(target.external() ? "RabbitMQ" : "SkiffMQ");
            assertThat(properties.get("version")).isInstanceOf(LongString.class);
            assertThat(properties.get("version").toString()).isNotBlank();
            @SuppressWarnings("unchecked")
            Map<String, Object> capabilities = (Map<String, Object>) properties.get("capabilities");
            // rabbit_reader:server_capabilities/1
            assertThat(capabilities).containsOnly(
                Map.entry("publisher_confirms", true),
                Map.entry("exchange_exchange_bindings", true),
                Map.entry("basic.nack", true),
                Map.entry("consumer_cancel_notify", true),
                Map.entry("connection.blocked", true),
                Map.entry("consumer_priorities", true),
                Map.entry("authentication_failure_close", true),
                Map.entry("per_consumer_qos", true),
                Map.entry("direct_reply_to", true));
        }
    }

    @Test
    void startOffersPlainAmqplainAndAnonymousInRabbitMqsOrder() throws Exception {
        try (Raw091Client client = Raw091Client.connect(target)) {
            client.writeRaw(Raw091Client.HEADER_091);
            AMQP.Connection.Start start = client.expect(AMQP.Connection.Start.class);
            assertThat(start.getVersionMajor()).isZero();
            assertThat(start.getVersionMinor()).isEqualTo(9);
            assertThat(start.getLocales()).hasToString("en_US");
            List<String> mechanisms = Arrays.asList(start.getMechanisms().toString().split(" "));
            if (target.external() && start.getServerProperties().get("version").toString().startsWith("3.")) {
                // RabbitMQ 3.x has no ANONYMOUS (4.0 added it: auth_mechanisms in deps/rabbit/Makefile)
                assertThat(mechanisms).containsExactlyInAnyOrder("PLAIN", "AMQPLAIN");
            } else {
                assertThat(mechanisms).containsExactlyInAnyOrder("PLAIN", "AMQPLAIN", "ANONYMOUS");
            }
        }
    }

    @Test
    void plainLoginWithTheDefaultsGetsRabbitMqsTuning() throws Exception {
        try (Connection connection = target.factory().newConnection()) {
            assertThat(connection.isOpen()).isTrue();
            // the client asks 2047 channels, any frame size and 60 s; RabbitMQ tunes 2047, 131072, 60
            assertThat(connection.getChannelMax()).isEqualTo(2047);
            assertThat(connection.getFrameMax()).isEqualTo(131072);
            assertThat(connection.getHeartbeat()).isEqualTo(60);
        }
    }

    @Test
    void aClientAskingForLessGetsWhatItAsked() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setRequestedChannelMax(10);
        factory.setRequestedFrameMax(8192);
        factory.setRequestedHeartbeat(5);
        try (Connection connection = factory.newConnection()) {
            assertThat(connection.getChannelMax()).isEqualTo(10);
            assertThat(connection.getFrameMax()).isEqualTo(8192);
            assertThat(connection.getHeartbeat()).isEqualTo(5);
            // a body bigger than frame-max goes in several body frames; the broker takes them
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            byte[] body = new byte[8192 * 3 + 17];
            Arrays.fill(body, (byte) 'x');
            channel.basicPublish("", queue, null, body);
            await().atMost(TIMEOUT).until(() -> channel.messageCount(queue) == 1);
            assertThat(channel.basicGet(queue, true).getBody()).isEqualTo(body);
        }
    }

    @Test
    void zeroAsksForTheBrokersValuesAndATuneOkWithoutHeartbeatsIsTaken() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setRequestedHeartbeat(0);
        try (Connection connection = factory.newConnection()) {
            // the client takes the broker's value when it asks for 0 (ConnectionFactory negotiates max when 0)
            assertThat(connection.getHeartbeat()).isEqualTo(60);
        }
        try (Raw091Client client = Raw091Client.connect(target)) {
            AMQP.Connection.Tune tune = client.start();
            assertThat(tune.getChannelMax()).isEqualTo(2047);
            assertThat(tune.getFrameMax()).isEqualTo(131072);
            assertThat(tune.getHeartbeat()).isEqualTo(60);
            client.tuneOk(2047, 131072, 0);
            client.send(0, new AMQP.Connection.Open.Builder().virtualHost("/").build());
            client.expect(AMQP.Connection.OpenOk.class); // heartbeat 0 in tune-ok: none either way
        }
    }

    @Test
    void aWrongPasswordIsAnAuthenticationFailure() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setPassword("not-the-password");
        // the client announces authentication_failure_close, so the broker says connection.close 403
        assertThatThrownBy(factory::newConnection).isInstanceOf(AuthenticationFailureException.class)
            .hasMessageStartingWith("ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN");
        factory.setUsername("nobody");
        assertThatThrownBy(factory::newConnection).isInstanceOf(AuthenticationFailureException.class)
            .hasMessageStartingWith("ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN");
        try (Connection connection = target.factory().newConnection()) {
            assertThat(connection.isOpen()).as("the broker goes on").isTrue();
        }
    }

    @Test
    void aWrongPasswordOverARawSocketGetsConnectionClose403() throws Exception {
        try (Raw091Client client = Raw091Client.connect(target)) {
            client.writeRaw(Raw091Client.HEADER_091);
            client.expect(AMQP.Connection.Start.class);
            client.send(0, Raw091Client.startOk("PLAIN", LongStringHelper.asLongString("\0guest\0wrong")));
            client.expectConnectionClose(AMQP.ACCESS_REFUSED,
                "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN");
        }
    }

    @Test
    void amqplainLogsIn() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setSaslConfig(mechanisms -> new SaslMechanism() {
            @Override
            public String getName() {
                return "AMQPLAIN";
            }

            @Override
            public LongString handleChallenge(LongString challenge, String username, String password) {
                // a field table without its length: LOGIN and PASSWORD as long strings
                ByteArrayOutputStream table = new ByteArrayOutputStream();
                for (String[] entry : new String[][] {{"LOGIN", username}, {"PASSWORD", password}}) {
                    byte[] key = entry[0].getBytes(StandardCharsets.UTF_8);
                    byte[] value = entry[1].getBytes(StandardCharsets.UTF_8);
                    table.write(key.length);
                    table.writeBytes(key);
                    table.write('S');
                    table.write(value.length >>> 24);
                    table.write(value.length >>> 16);
                    table.write(value.length >>> 8);
                    table.write(value.length);
                    table.writeBytes(value);
                }
                return LongStringHelper.asLongString(table.toByteArray());
            }
        });
        try (Connection connection = factory.newConnection()) {
            assertThat(connection.isOpen()).isTrue();
            assertThat(connection.createChannel().queueDeclare().getQueue()).startsWith("amq.gen-");
        }
    }

    @Test
    void anonymousLogsInAsGuest() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setUsername("ignored");
        factory.setPassword("ignored");
        SaslConfig anonymous = mechanisms -> new SaslMechanism() {
            @Override
            public String getName() {
                return "ANONYMOUS";
            }

            @Override
            public LongString handleChallenge(LongString challenge, String username, String password) {
                return LongStringHelper.asLongString("");
            }
        };
        factory.setSaslConfig(anonymous);
        try (Connection probe = target.factory().newConnection()) {
            org.junit.jupiter.api.Assumptions.assumeFalse(rabbitMq3(probe), "RabbitMQ 4 only: 3.x has no ANONYMOUS");
        }
        try (Connection connection = factory.newConnection()) {
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            // logged in as guest (anonymous_login_user): a user_id other than the login is refused
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().userId("guest").build(), new byte[0]);
            await().atMost(TIMEOUT).until(() -> channel.messageCount(queue) == 1);
        }
    }

    @Test
    void anUnknownMechanismClosesTheSocketWithoutAClose() throws Exception {
        try (Raw091Client client = Raw091Client.connect(target)) {
            client.writeRaw(Raw091Client.HEADER_091);
            client.expect(AMQP.Connection.Start.class);
            client.send(0, Raw091Client.startOk("CRAM-MD5", LongStringHelper.asLongString("")));
            // rabbit_reader:auth_mechanism_to_module raises command_invalid while starting; handle_exception sends
            // connection.close only for access_refused then, so the socket just closes (after 3 s in RabbitMQ)
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void anUnknownVhostIsNotAllowed() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setVirtualHost("no-such-vhost");
        AMQP.Connection.Close close = connectionErrorOnOpen(factory);
        assertThat(close.getReplyCode()).isEqualTo(AMQP.NOT_ALLOWED);
        assertThat(close.getReplyText()).isEqualTo("NOT_ALLOWED - vhost no-such-vhost not found");
    }

    private static AMQP.Connection.Close connectionErrorOnOpen(ConnectionFactory factory) {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(factory::newConnection);
        ShutdownSignalException signal = Amqp091Support.signal(thrown);
        assertThat(signal.isHardError()).isTrue();
        return (AMQP.Connection.Close) signal.getReason();
    }

    /**
     * A tune-ok outside the broker's limits: rabbit_reader:validate_negotiated_integer_value fails it with
     * not_allowed, but for the method connection.tune, so handle_method0 wraps it and handle_exception closes the
     * socket with no connection.close (after 3 s in RabbitMQ); RabbitMQ logs "failed to negotiate connection
     * parameters". 0 ("no limit") is above any limit.
     */
    @Test
    void tuneOkOutsideTheBrokersLimitsClosesTheSocketWithoutAClose() throws Exception {
        int[][] refused = {{2047, 131073, 0}, {2047, 1024, 0}, {2047, 0, 0}, {2048, 131072, 0}, {0, 131072, 0}};
        for (int[] tuneOk : refused) {
            try (Raw091Client client = Raw091Client.connect(target)) {
                client.start();
                client.tuneOk(tuneOk[0], tuneOk[1], tuneOk[2]);
                client.send(0, new AMQP.Connection.Open.Builder().virtualHost("/").build());
                assertThat(client.closedByBroker()).as(Arrays.toString(tuneOk)).isTrue();
            }
        }
    }

    @Test
    void aChannelBeyondTheNegotiatedChannelMaxClosesTheConnection() throws Exception {
        try (Raw091Client client = Raw091Client.open(target, 2, 0, 0)) {
            for (int channel = 1; channel <= 2; channel++) {
                client.send(channel, new AMQP.Channel.Open.Builder().build());
                client.expect(AMQP.Channel.OpenOk.class);
            }
            client.send(3, new AMQP.Channel.Open.Builder().build());
            // rabbit_reader:create_channel counts open channels against channel_max (a hard error)
            client.expectConnectionClose(AMQP.NOT_ALLOWED,
                "NOT_ALLOWED - number of channels opened (2) has reached the negotiated channel_max (2)");
        }
    }

    @Test
    void clientCloseIsAnsweredAndOtherConnectionsGoOn() throws Exception {
        try (Connection other = target.factory().newConnection()) {
            Channel otherChannel = other.createChannel();
            Connection connection = target.factory().newConnection();
            List<ShutdownSignalException> shutdowns = new CopyOnWriteArrayList<>();
            connection.addShutdownListener(shutdowns::add);
            Channel channel = connection.createChannel();
            channel.queueDeclare();
            connection.close(AMQP.REPLY_SUCCESS, "done", (int) TIMEOUT.toMillis());
            assertThat(connection.isOpen()).isFalse();
            assertThat(channel.isOpen()).isFalse();
            await().atMost(TIMEOUT).until(() -> !shutdowns.isEmpty()); // listeners run on the client's thread
            assertThat(shutdowns).singleElement().satisfies(s -> {
                assertThat(s.isInitiatedByApplication()).isTrue();
                assertThat(s.isHardError()).isTrue();
            });
            assertThat(otherChannel.queueDeclare().getQueue()).startsWith("amq.gen-");
        }
    }

    @Test
    void rawCloseGetsCloseOk() throws Exception {
        try (Raw091Client client = Raw091Client.open(target, 0, 0, 0)) {
            client.send(0, new AMQP.Connection.Close.Builder().replyCode(200).replyText("bye").build());
            // the client, having sent close, closes the socket on close-ok (RabbitMQ waits for it to)
            client.expect(AMQP.Connection.CloseOk.class);
        }
    }

    @Test
    void brokerHeartbeatsKeepAnIdleConnectionWithAShortHeartbeatAlive() throws Exception {
        ConnectionFactory factory = target.factory();
        factory.setRequestedHeartbeat(1);
        try (Connection connection = factory.newConnection()) {
            assertThat(connection.getHeartbeat()).isEqualTo(1);
            // the client gives up after missing the broker's heartbeats for 2 intervals; the broker would close
            // a client it does not hear from: idle for 3.5 intervals, both must keep sending
            await().during(Duration.ofMillis(3500)).atMost(Duration.ofSeconds(6)).until(connection::isOpen);
            assertThat(connection.createChannel().queueDeclare().getQueue()).startsWith("amq.gen-");
        }
    }
}
