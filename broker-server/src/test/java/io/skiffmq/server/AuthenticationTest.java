package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.JMSSecurityException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Logins end to end: refusals with their exact errors on both protocols, the rate limit, a storm of bad logins. */
@ExtendWith(LeakDetection.class)
class AuthenticationTest {
    private static final String REFUSED = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. "
        + "For details see the broker logfile.";

    @TempDir
    Path dir;

    private static ConnectionFactory factory(RunningBroker broker, String user, String password) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setUsername(user);
        factory.setPassword(password);
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    @Test
    void aWrongPasswordIsRefusedOnBothProtocols() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            assertThatThrownBy(() -> factory(broker, "guest", "wrong").newConnection())
                .isInstanceOf(AuthenticationFailureException.class).hasMessage(REFUSED);
            // AMQP 1.0: sasl-outcome code auth, which Qpid JMS reports as a security exception
            JmsConnectionFactory jms = new JmsConnectionFactory("guest", "wrong", broker.amqpUri());
            assertThatThrownBy(() -> jms.createConnection().start()).isInstanceOf(JMSSecurityException.class)
                .hasMessageContaining("Client failed to authenticate using SASL: PLAIN");
            try (jakarta.jms.Connection good = new JmsConnectionFactory("guest", "guest", broker.amqpUri())
                    .createConnection()) {
                good.start();
            }
        }
    }

    @Test
    void framesPipelinedBehindSaslInitWaitForTheOutcomeInOrder() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
             RawClient client = new RawClient(broker.port())) {
            client.saslMechanisms();
            org.apache.qpid.proton.amqp.security.SaslInit init = new org.apache.qpid.proton.amqp.security.SaslInit();
            init.setMechanism(org.apache.qpid.proton.amqp.Symbol.valueOf("PLAIN"));
            init.setInitialResponse(new org.apache.qpid.proton.amqp.Binary("\0guest\0guest".getBytes(
                StandardCharsets.UTF_8)));
            // sasl-init, the AMQP header and open, sent without waiting for the outcome (as some clients do)
            client.write(io.skiffmq.codec.amqp10.AmqpFrame.TYPE_SASL, 0, init, null);
            client.writeRaw(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0});
            org.apache.qpid.proton.amqp.transport.Open open = new org.apache.qpid.proton.amqp.transport.Open();
            open.setContainerId("pipelining");
            client.write(0, open);
            assertThat(client.read().as(org.apache.qpid.proton.amqp.security.SaslOutcome.class).getCode())
                .isEqualTo(org.apache.qpid.proton.amqp.security.SaslCode.OK);
            client.expectBytes(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0});
            assertThat(client.read().as(org.apache.qpid.proton.amqp.transport.Open.class).getContainerId())
                .isNotNull();
        }
    }

    @Test
    void overTheRateLimitAnAddressIsRefusedWithoutHashing() throws Exception {
        try (RunningBroker broker = RunningBroker.start("login-failure-burst=3", "login-failure-rate=0.001")) {
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> factory(broker, "guest", "wrong").newConnection())
                    .isInstanceOf(AuthenticationFailureException.class).hasMessage(REFUSED);
            }
            long checked = broker.authenticator().checks();
            assertThatThrownBy(() -> factory(broker, "guest", "guest").newConnection())
                .isInstanceOf(AuthenticationFailureException.class)
                .hasMessage("ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN: too many failed "
                    + "logins from this address, try again later.");
            // AMQP 1.0 hears sys-temp: a temporary refusal
            JmsConnectionFactory jms = new JmsConnectionFactory("guest", "guest", broker.amqpUri());
            assertThatThrownBy(() -> jms.createConnection().start()).isInstanceOf(jakarta.jms.JMSException.class)
                .hasMessageContaining("SASL");
            assertThat(broker.authenticator().checks()).as("refused before any password was checked")
                .isEqualTo(checked);
        }
    }

    /**
     * 240 logins with wrong passwords, against a user whose hash is deliberately slow (our earlier PBKDF2, 100,000
     * iterations: ~30 ms of CPU each), while a bystander on the same, only event loop keeps publishing and getting
     * messages back.
     */
    @Test
    void aBystanderKeepsWorkingDuringAStormOfBadLogins() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "slow:" + pbkdf2("right", 100_000) + "\n");
        try (RunningBroker broker = RunningBroker.start("event-loops=1", "login-failure-burst=0",
                "users-file=" + users);
             com.rabbitmq.client.Connection bystander = factory(broker, "guest", "guest").newConnection()) {
            Channel channel = bystander.createChannel();
            String queue = channel.queueDeclare().getQueue();
            AtomicBoolean storming = new AtomicBoolean(true);
            AtomicInteger roundTrips = new AtomicInteger();
            Thread pinger = new Thread(() -> {
                try {
                    while (storming.get()) {
                        channel.basicPublish("", queue, null, "ping".getBytes(StandardCharsets.UTF_8));
                        GetResponse response;
                        do {
                            response = channel.basicGet(queue, true);
                        } while (response == null);
                        if (storming.get()) {
                            roundTrips.incrementAndGet();
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            ExecutorService attackers = Executors.newFixedThreadPool(40);
            try {
                pinger.start();
                List<Future<Throwable>> attempts = new ArrayList<>();
                for (int i = 0; i < 240; i++) {
                    String password = "wrong-" + i;
                    attempts.add(attackers.submit(() -> {
                        try (com.rabbitmq.client.Connection c = factory(broker, "slow", password).newConnection()) {
                            return null;
                        } catch (Exception e) {
                            return e;
                        }
                    }));
                }
                for (Future<Throwable> attempt : attempts) {
                    assertThat(attempt.get()).isInstanceOf(AuthenticationFailureException.class).hasMessage(REFUSED);
                }
            } finally {
                storming.set(false);
                attackers.shutdownNow();
                pinger.join();
            }
            assertThat(broker.authenticator().checks()).isGreaterThanOrEqualTo(240);
            assertThat(roundTrips.get()).as("round trips served while the storm ran").isGreaterThanOrEqualTo(50);
            assertThat(bystander.isOpen()).isTrue();
        }
    }

    /**
     * One authentication thread, a queue of one: while a slow check runs, of two more logins one waits in the queue
     * (then is refused as a bad password) and the other is refused at once as busy.
     */
    @Test
    void whenEveryAuthenticationThreadIsBusyAndTheQueueFullALoginIsRefusedAtOnce() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "slow:" + pbkdf2("right", 2_000_000) + "\n"); // a second or so of CPU per check
        try (RunningBroker broker = RunningBroker.start("auth-threads=1", "auth-queue=1", "login-failure-burst=0",
                "users-file=" + users)) {
            ExecutorService first = Executors.newSingleThreadExecutor();
            try {
                Future<Throwable> running = first.submit(() -> {
                    try (com.rabbitmq.client.Connection c = factory(broker, "slow", "wrong").newConnection()) {
                        return null;
                    } catch (Exception e) {
                        return e;
                    }
                });
                org.awaitility.Awaitility.await().until(() -> broker.authenticator().checks() == 1);
                try (Raw091Client a = new Raw091Client("127.0.0.1", broker.port());
                     Raw091Client b = new Raw091Client("127.0.0.1", broker.port())) {
                    for (Raw091Client client : List.of(a, b)) {
                        client.writeRaw(Raw091Client.HEADER_091);
                        client.expect(com.rabbitmq.client.AMQP.Connection.Start.class);
                        client.send(0, Raw091Client.startOk("PLAIN", com.rabbitmq.client.impl.LongStringHelper
                            .asLongString("\0slow\0wrong")));
                    }
                    List<String> answers = new ArrayList<>();
                    for (Raw091Client client : List.of(a, b)) {
                        com.rabbitmq.client.AMQP.Connection.Close close = client.expect(
                            com.rabbitmq.client.AMQP.Connection.Close.class);
                        answers.add(close.getReplyCode() + " " + close.getReplyText());
                    }
                    assertThat(answers).containsExactlyInAnyOrder(
                        "403 ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN: the broker's "
                            + "authentication is busy, try again later.",
                        "403 " + REFUSED);
                }
                assertThat(running.get()).isInstanceOf(AuthenticationFailureException.class).hasMessage(REFUSED);
            } finally {
                first.shutdownNow();
            }
        }
    }

    /**
     * Connections that go away while their login is checked: the result is dropped, what they had pipelined is
     * released (leak detection watches), and the broker goes on. One authentication thread and one event loop, so a
     * login made afterwards is answered only after the dropped results have come back to the loop.
     */
    @Test
    void aConnectionClosedWhileItsLoginIsCheckedJustDropsTheResult() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "slow:" + pbkdf2("right", 300_000) + "\n");
        try (RunningBroker broker = RunningBroker.start("auth-threads=1", "event-loops=1", "users-file=" + users)) {
            try (Raw091Client gone = new Raw091Client("127.0.0.1", broker.port())) {
                gone.writeRaw(Raw091Client.HEADER_091);
                gone.expect(com.rabbitmq.client.AMQP.Connection.Start.class);
                gone.send(0, Raw091Client.startOk("PLAIN", com.rabbitmq.client.impl.LongStringHelper
                    .asLongString("\0slow\0right")));
                gone.send(0, new com.rabbitmq.client.AMQP.Connection.TuneOk.Builder().channelMax(10)
                    .frameMax(131072).heartbeat(0).build());
            }
            try (RawClient gone = new RawClient(broker.port())) {
                gone.saslMechanisms();
                org.apache.qpid.proton.amqp.security.SaslInit init =
                    new org.apache.qpid.proton.amqp.security.SaslInit();
                init.setMechanism(org.apache.qpid.proton.amqp.Symbol.valueOf("PLAIN"));
                init.setInitialResponse(new org.apache.qpid.proton.amqp.Binary("\0slow\0right".getBytes(
                    StandardCharsets.UTF_8)));
                gone.write(io.skiffmq.codec.amqp10.AmqpFrame.TYPE_SASL, 0, init, null);
                gone.writeRaw(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0});
                org.apache.qpid.proton.amqp.transport.Open open = new org.apache.qpid.proton.amqp.transport.Open();
                open.setContainerId("gone");
                gone.write(0, open);
                gone.writeRaw(new byte[0]);
            }
            try (com.rabbitmq.client.Connection after = factory(broker, "slow", "right").newConnection()) {
                assertThat(after.isOpen()).isTrue();
            }
            assertThat(broker.authenticator().checks()).isEqualTo(3);
        }
    }

    /** A users-file hash in our earlier format, {@code pbkdf2-sha256$iterations$salt$key}. */
    private static String pbkdf2(String password, int iterations) throws Exception {
        byte[] salt = new byte[16];
        new java.security.SecureRandom().nextBytes(salt);
        javax.crypto.spec.PBEKeySpec spec = new javax.crypto.spec.PBEKeySpec(password.toCharArray(), salt, iterations,
            256);
        byte[] key = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec)
            .getEncoded();
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder().withoutPadding();
        return "pbkdf2-sha256$" + iterations + "$" + b64.encodeToString(salt) + "$" + b64.encodeToString(key);
    }
}
