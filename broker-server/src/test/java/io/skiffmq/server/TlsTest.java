package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultSaslConfig;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.auth.UserStore;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The AMQPS listener with certificates made here: a trusted client certificate gets in (and logs in with SASL
 * EXTERNAL over both protocols as the user its CN names), an untrusted one and none at all (with
 * {@code tls-verify=required}) fail the handshake; with {@code optional}, a client without one logs in with PLAIN.
 */
@ExtendWith(LeakDetection.class)
class TlsTest {
    @TempDir
    static Path dir;
    private static TestCertificates.Issued ca;
    private static TestCertificates.Issued alice;
    private static TestCertificates.Issued mallory;
    private static TestCertificates.Issued rogue;
    private static RunningBroker required;
    private static RunningBroker optional;
    private static RunningBroker jdk;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCertificates.ca("SkiffMQ test CA");
        TestCertificates.Issued server = TestCertificates.server(ca);
        alice = TestCertificates.client(ca, "alice");
        mallory = TestCertificates.client(ca, "mallory"); // trusted, but no such user
        rogue = TestCertificates.client(TestCertificates.ca("Rogue CA"), "alice");
        TestCertificates.writePem(server, dir.resolve("server.pem"), dir.resolve("server.key"));
        TestCertificates.writePem(ca.certificate(), dir.resolve("ca.pem"));
        Files.writeString(dir.resolve("users"), "alice:" + UserStore.hash("alice-password") + "\n");
        required = start("required");
        optional = start("optional");
        jdk = start("required", "tls-provider=jdk");
    }

    private static RunningBroker start(String verify, String... more) throws Exception {
        java.util.List<String> settings = new java.util.ArrayList<>(java.util.List.of("amqps-port=0",
            "tls-cert-file=" + dir.resolve("server.pem"), "tls-key-file=" + dir.resolve("server.key"),
            "tls-ca-file=" + dir.resolve("ca.pem"), "tls-verify=" + verify, "users-file=" + dir.resolve("users")));
        settings.addAll(java.util.List.of(more));
        return RunningBroker.start(settings.toArray(String[]::new));
    }

    @AfterAll
    static void stop() {
        required.close();
        optional.close();
        jdk.close();
    }

    private static ConnectionFactory factory(RunningBroker broker, TestCertificates.Issued client) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.amqpsPort());
        factory.useSslProtocol(TestCertificates.clientContext(ca, client));
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(10_000);
        return factory;
    }

    private static void roundTrip(com.rabbitmq.client.Connection connection) throws Exception {
        Channel channel = connection.createChannel();
        String queue = channel.queueDeclare().getQueue();
        channel.basicPublish("", queue, null, "over TLS".getBytes(StandardCharsets.UTF_8));
        GetResponse response;
        do {
            response = channel.basicGet(queue, true);
        } while (response == null);
        assertThat(new String(response.getBody(), StandardCharsets.UTF_8)).isEqualTo("over TLS");
    }

    @Test
    void aTrustedClientCertificateGetsInAndPlainStillWorks() throws Exception {
        ConnectionFactory factory = factory(required, alice);
        factory.setUsername("guest");
        factory.setPassword("guest");
        try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
            roundTrip(connection);
        }
    }

    @Test
    void saslExternalOver091LogsInAsTheCertificatesCommonName() throws Exception {
        ConnectionFactory factory = factory(required, alice);
        factory.setSaslConfig(DefaultSaslConfig.EXTERNAL);
        try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
            roundTrip(connection);
            // the user is alice: a user_id property naming another user is refused (RabbitMQ's rule)
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            channel.basicPublish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder().userId("alice")
                .build(), new byte[0]);
            GetResponse response;
            do {
                response = channel.basicGet(queue, true);
            } while (response == null);
            assertThat(response.getProps().getUserId()).isEqualTo("alice");
        }
    }

    @Test
    void saslExternalForACertificateOfNoUserIsRefused() throws Exception {
        ConnectionFactory factory = factory(required, mallory);
        factory.setSaslConfig(DefaultSaslConfig.EXTERNAL);
        assertThatThrownBy(factory::newConnection).isInstanceOf(AuthenticationFailureException.class)
            .hasMessage("ACCESS_REFUSED - Login was refused using authentication mechanism EXTERNAL. "
                + "For details see the broker logfile.");
    }

    @Test
    void saslExternalOverAmqp10WithQpidJms() throws Exception {
        Path keyStore = TestCertificates.save(TestCertificates.keyStore(alice), dir.resolve("alice.p12"));
        Path trustStore = TestCertificates.save(TestCertificates.trustStore(ca), dir.resolve("trust.p12"));
        String password = new String(TestCertificates.PASSWORD);
        String uri = "amqps://127.0.0.1:" + required.amqpsPort() + "?transport.keyStoreLocation=" + keyStore
            + "&transport.keyStorePassword=" + password + "&transport.trustStoreLocation=" + trustStore
            + "&transport.trustStorePassword=" + password + "&transport.storeType=PKCS12"
            + "&amqp.saslMechanisms=EXTERNAL";
        try (jakarta.jms.Connection connection = new JmsConnectionFactory(uri).createConnection()) {
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            jakarta.jms.Queue queue = session.createQueue("tls-external");
            MessageConsumer consumer = session.createConsumer(queue);
            session.createProducer(queue).send(session.createTextMessage("hello over amqps"));
            TextMessage message = (TextMessage) consumer.receive(10_000);
            assertThat(message).isNotNull();
            assertThat(message.getText()).isEqualTo("hello over amqps");
        }
    }

    @Test
    void anUntrustedClientCertificateFailsTheHandshake() throws Exception {
        for (RunningBroker broker : new RunningBroker[] {required, jdk}) {
            ConnectionFactory factory = factory(broker, rogue);
            assertThatThrownBy(factory::newConnection).isInstanceOfAny(java.io.IOException.class,
                java.util.concurrent.TimeoutException.class);
        }
    }

    @Test
    void theJdkProviderServesTheSame() throws Exception {
        ConnectionFactory factory = factory(jdk, alice);
        factory.setSaslConfig(DefaultSaslConfig.EXTERNAL);
        try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
            roundTrip(connection);
        }
        assertThatThrownBy(factory(jdk, null)::newConnection).isInstanceOfAny(java.io.IOException.class,
            java.util.concurrent.TimeoutException.class);
    }

    @Test
    void withVerificationRequiredNoCertificateFailsTheHandshake() throws Exception {
        ConnectionFactory factory = factory(required, null);
        assertThatThrownBy(factory::newConnection).isInstanceOfAny(java.io.IOException.class,
            java.util.concurrent.TimeoutException.class);
    }

    @Test
    void withVerificationOptionalNoCertificateMeansPlainButNoExternal() throws Exception {
        try (com.rabbitmq.client.Connection connection = factory(optional, null).newConnection()) {
            roundTrip(connection); // guest over TLS from loopback
        }
        ConnectionFactory external = factory(optional, null);
        external.setSaslConfig(DefaultSaslConfig.EXTERNAL);
        // EXTERNAL is not offered without a certificate: the client finds no mechanism it can use
        assertThatThrownBy(external::newConnection).isInstanceOf(java.io.IOException.class)
            .hasMessageContaining("server offered [PLAIN AMQPLAIN ANONYMOUS]");
    }
}
