package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.impl.Client;
import com.rabbitmq.stream.sasl.DefaultSaslConfiguration;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.auth.UserStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream protocol over TLS ({@code stream-tls-port}, the AMQPS certificates): a producer and a consumer whose
 * chunks go through the TLS handler (as mapped buffers, never file regions), and SASL EXTERNAL logging in as the
 * client certificate's CN; {@code open} advertises the TLS port.
 */
@ExtendWith(LeakDetection.class)
class StreamProtocolTlsTest {
    @TempDir
    static Path dir;
    private static TestCertificates.Issued ca;
    private static TestCertificates.Issued alice;
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCertificates.ca("SkiffMQ stream test CA");
        TestCertificates.Issued server = TestCertificates.server(ca);
        alice = TestCertificates.client(ca, "alice");
        TestCertificates.writePem(server, dir.resolve("server.pem"), dir.resolve("server.key"));
        TestCertificates.writePem(ca.certificate(), dir.resolve("ca.pem"));
        Files.writeString(dir.resolve("users"), "alice:" + UserStore.hash("alice-password") + "\n");
        broker = RunningBroker.start("stream-tls-port=0", "tls-cert-file=" + dir.resolve("server.pem"),
            "tls-key-file=" + dir.resolve("server.key"), "tls-ca-file=" + dir.resolve("ca.pem"),
            "tls-verify=optional", "users-file=" + dir.resolve("users"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** A client context trusting the test CA, presenting {@code client}'s certificate when it is not null. */
    private static SslContext tls(TestCertificates.Issued client) throws Exception {
        // the server's certificate names localhost, the clients connect to 127.0.0.1
        SslContextBuilder builder = SslContextBuilder.forClient().trustManager(ca.certificate())
            .endpointIdentificationAlgorithm(null);
        if (client != null) {
            builder.keyManager(client.keys().getPrivate(), (X509Certificate) client.certificate());
        }
        return builder.build();
    }

    @Test
    void aProducerAndAConsumerOverTls() throws Exception {
        try (Environment environment = StreamClients.builder(broker.streamTlsPort()).tls().sslContext(tls(null))
                .environmentBuilder().build()) {
            environment.streamCreator().stream("secret").create();
            try (Producer producer = environment.producerBuilder().stream("secret").build()) {
                assertThat(StreamClients.sendAndConfirm(producer, "s" + "z".repeat(70_000), 20)).isEmpty();
            }
            List<String> got = Collections.synchronizedList(new ArrayList<>());
            try (var consumer = environment.consumerBuilder().stream("secret").offset(OffsetSpecification.first())
                    .messageHandler((c, m) -> got.add(StreamClients.text(m))).build()) {
                Amqp091Support.await().atMost(TIMEOUT).until(() -> got.size() == 20);
            }
            assertThat(got).allMatch(body -> body.length() > 70_000);
            assertThat(got.get(19)).endsWith("19");
        }
    }

    @Test
    void saslExternalLogsInAsTheCertificatesCommonName() throws Exception {
        Client client = new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamTlsPort())
            .sslContext(tls(alice)).saslConfiguration(DefaultSaslConfiguration.EXTERNAL));
        try {
            assertThat(client.create("alices").isOk()).isTrue();
            Client.Broker leader = client.metadata("alices").get("alices").getLeader();
            assertThat(leader.getPort()).isEqualTo(broker.streamTlsPort());
            assertThat(broker.broker().connections()).anySatisfy(c -> {
                assertThat(c.protocol()).isEqualTo("stream");
                assertThat(c.opened().user()).isEqualTo("alice");
            });
        } finally {
            client.close();
        }
    }
}
