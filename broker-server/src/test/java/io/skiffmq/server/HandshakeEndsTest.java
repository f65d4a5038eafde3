package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.ConnectionEnd;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Connections that end before a protocol is spoken, in the protocol detector or TLS: one INFO line each, of the
 * right end, and never an ERROR ({@link HostilePeersTest} has the ends after the protocol header).
 */
@ExtendWith(LeakDetection.class)
class HandshakeEndsTest {
    private LogCapture log;

    @BeforeEach
    void capture() {
        log = LogCapture.capture();
    }

    @AfterEach
    void noErrors() {
        try {
            assertThat(log.errors()).as("ERROR lines").isEmpty();
        } finally {
            log.close();
        }
    }

    @Test
    void aSilentPeerIsOneHandshakeTimeoutLine() throws Exception {
        try (RunningBroker quick = RunningBroker.start("handshake-timeout=300");
             RawClient silent = new RawClient(quick.port())) {
            assertThat(silent.closedByBroker()).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> quick.ends().total() == 1);
            assertThat(quick.ends().count(ConnectionEnd.HANDSHAKE_TIMEOUT)).isEqualTo(1);
            assertThat(log.lines(Level.INFO, m -> m.startsWith("connection " + silent.name() + ": closed ("))).containsExactly("connection " + silent.name()
                + ": closed (handshake_timeout): no protocol header within 300 ms");
        }
    }

    @Test
    void plainTextOnTheTlsPortIsOneTlsErrorLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        TestCertificates.Issued ca = TestCertificates.ca("SkiffMQ test CA");
        TestCertificates.writePem(TestCertificates.server(ca), dir.resolve("server.pem"), dir.resolve("server.key"));
        try (RunningBroker tls = RunningBroker.start("amqps-port=0", "tls-cert-file=" + dir.resolve("server.pem"),
                "tls-key-file=" + dir.resolve("server.key"));
             Socket socket = new Socket("127.0.0.1", tls.amqpsPort())) {
            socket.setSoTimeout(10_000);
            // not a TLS record (an AMQP header would read as the start of an SSLv2 hello, and wait for more)
            socket.getOutputStream().write("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            socket.getInputStream().readAllBytes();
            await().atMost(Duration.ofSeconds(5)).until(() -> tls.ends().total() == 1);
            String name = "127.0.0.1:" + socket.getLocalPort() + " -> 127.0.0.1:" + tls.amqpsPort();
            assertThat(tls.ends().count(ConnectionEnd.TLS_ERROR)).isEqualTo(1);
            assertThat(log.lines(Level.INFO, m -> m.startsWith("connection " + name + ": closed (tls_error): ")))
                .hasSize(1);
        }
    }

    @Test
    void plainAmqpOnTheTlsPortIsClosedAtOnceAsATlsErrorAndRateLimited(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) throws Exception {
        TestCertificates.Issued ca = TestCertificates.ca("SkiffMQ test CA");
        TestCertificates.writePem(TestCertificates.server(ca), dir.resolve("server.pem"), dir.resolve("server.key"));
        int peers = 12;
        try (RunningBroker tls = RunningBroker.start("amqps-port=0", "tls-cert-file=" + dir.resolve("server.pem"),
                "tls-key-file=" + dir.resolve("server.key"))) {
            for (int i = 0; i < peers; i++) {
                byte[] header = i % 2 == 0 ? new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1}
                    : new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}; // a 0-9-1 client, an AMQP 1.0 SASL one
                try (Socket socket = new Socket("127.0.0.1", tls.amqpsPort())) {
                    // well under the 10 s handshake timeout SslHandler used to wait for
                    socket.setSoTimeout(3_000);
                    socket.getOutputStream().write(header);
                    assertThat(socket.getInputStream().readAllBytes()).as("closed without a byte").isEmpty();
                }
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> tls.ends().total() == peers);
            assertThat(tls.ends().count(ConnectionEnd.TLS_ERROR)).isEqualTo(peers);
            java.util.List<String> lines = log.lines(Level.INFO, m -> m.contains(": closed (tls_error): "));
            assertThat(lines).hasSizeLessThan(peers).isNotEmpty()
                .allSatisfy(line -> assertThat(line).endsWith(
                    ": closed (tls_error): plain AMQP on the TLS port (a protocol header, not a TLS record)"));
        }
    }
}
