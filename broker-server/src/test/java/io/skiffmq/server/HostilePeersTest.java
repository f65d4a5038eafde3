package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnds;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How connections end, as the log and the counters tell it (issue 17): a peer's garbage is one INFO line and the
 * right close, a reset is no internal error, a proper close is DEBUG, and a flood of bad connections is a few lines
 * and a summary while a bystander goes on working. No test may leave an ERROR line. A broker per test, so each
 * starts with full log-line buckets.
 */
@ExtendWith(LeakDetection.class)
class HostilePeersTest {
    private RunningBroker broker;
    private LogCapture log;

    @BeforeEach
    void start() throws Exception {
        broker = RunningBroker.start();
        log = LogCapture.capture();
    }

    @AfterEach
    void noErrors() {
        try {
            assertThat(log.errors()).as("ERROR lines").isEmpty();
            assertThat(ends().count(ConnectionEnd.INTERNAL_ERROR)).as("internal-error ends").isZero();
        } finally {
            log.close();
            broker.close();
        }
    }

    private ConnectionEnds ends() {
        return broker.ends();
    }

    private List<String> endLines(Level level, RawClient client) {
        return log.lines(level, m -> m.startsWith("connection " + client.name() + ": closed ("));
    }

    @Test
    void garbageAfterTheAmqpHeaderIsOneInfoLineAndADecodeErrorClose() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            client.open();
            // a frame whose body starts with a format code AMQP 1.0 does not define
            client.writeRaw(new byte[] {0, 0, 0, 12, 2, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
            Close close = client.readUntil(Close.class);
            assertThat(close.getError().getCondition().toString()).isEqualTo("amqp:decode-error");
            assertThat(client.closedByBroker()).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> !endLines(Level.INFO, client).isEmpty());
            assertThat(endLines(Level.INFO, client)).hasSize(1);
            assertThat(endLines(Level.INFO, client).get(0))
                .startsWith("connection " + client.name() + ": closed (protocol_error): amqp:decode-error ");
            assertThat(ends().count(ConnectionEnd.PROTOCOL_ERROR)).isEqualTo(1);
        }
    }

    @Test
    void anAmqpHeaderDuringSaslIsOneProtocolErrorAndNothingAfterIt() throws Exception {
        // the corpus replay's most common case: the broker closed, then wrote to the closed socket (issue 17)
        try (RawClient client = new RawClient(broker.port())) {
            byte[] garbage = new byte[200];
            java.util.Arrays.fill(garbage, (byte) 0x53);
            client.writeRaw(concat(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}, new byte[] {'A', 'M', 'Q', 'P', 0, 1,
                0, 0}, garbage));
            assertThat(client.closedByBroker()).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> ends().total() == 1);
            assertThat(ends().count(ConnectionEnd.PROTOCOL_ERROR)).isEqualTo(1);
            assertThat(endLines(Level.INFO, client)).containsExactly(
                "connection " + client.name() + ": closed (protocol_error): AMQP header in state SASL");
        }
    }

    @Test
    void amqp091GarbageAfterTheHandshakeIsOneInfoLineAnd501() throws Exception {
        try (Raw091Client client = new Raw091Client("127.0.0.1", broker.port())) {
            com.rabbitmq.client.AMQP.Connection.Tune tune = client.start();
            client.tuneOk(tune.getChannelMax(), tune.getFrameMax(), 0);
            client.writeFrame(1, 0, new byte[] {0, 10, 0, 40}, 0x00); // frame-end 0x00, not 0xCE
            client.expectConnectionClose(501, "FRAME_ERROR");
            await().atMost(Duration.ofSeconds(5)).until(() -> ends().total() == 1);
            List<String> lines = log.lines(Level.INFO, m -> m.startsWith("connection " + client.name() + ": closed ("));
            assertThat(lines).hasSize(1);
            assertThat(lines.get(0)).startsWith("connection " + client.name() + ": closed (protocol_error): 501 ");
        }
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (byte[] part : parts) {
            all.writeBytes(part);
        }
        return all.toByteArray();
    }

    @Test
    void aResetMidSessionIsANetworkEndNeverAnInternalError() throws Exception {
        RawClient client = RawClient.openSession(broker.port());
        client.attachSender(0, "reset-q");
        client.readUntil(Flow.class);
        client.transfer(0, 0, Messages.data("before the reset", null), false);
        client.reset();
        await().atMost(Duration.ofSeconds(5)).until(() -> ends().total() == 1);
        assertThat(ends().count(ConnectionEnd.RESET) + ends().count(ConnectionEnd.EOF)).isEqualTo(1);
        assertThat(log.lines(Level.INFO, m -> true)).noneMatch(m -> m.contains("internal"));
    }

    @Test
    void anAmqp091ResetIsANetworkEndNeverAnInternalError() throws Exception {
        Raw091Client client = new Raw091Client("127.0.0.1", broker.port());
        com.rabbitmq.client.AMQP.Connection.Tune tune = client.start();
        client.tuneOk(tune.getChannelMax(), tune.getFrameMax(), 0);
        client.send(0, new com.rabbitmq.client.AMQP.Connection.Open.Builder().virtualHost("/").build());
        assertThat(client.read().method()).isInstanceOf(com.rabbitmq.client.AMQP.Connection.OpenOk.class);
        client.reset();
        await().atMost(Duration.ofSeconds(5)).until(() -> ends().total() == 1);
        assertThat(ends().count(ConnectionEnd.RESET) + ends().count(ConnectionEnd.EOF)).isEqualTo(1);
    }

    @Test
    void aProperCloseIsOneDebugLine() throws Exception {
        RawClient client = RawClient.openSession(broker.port());
        client.write(0, new Close());
        assertThat(client.readUntil(Close.class).getError()).isNull();
        assertThat(client.closedByBroker()).isTrue();
        client.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> ends().total() == 1);
        assertThat(endLines(Level.DEBUG, client)).hasSize(1);
        assertThat(endLines(Level.DEBUG, client).get(0))
            .isEqualTo("connection " + client.name() + ": closed (client_close): the client closed");
        assertThat(endLines(Level.INFO, client)).isEmpty();
    }

    @Test
    void aFloodOfBadConnectionsIsAFewLinesAndASummaryWhileABystanderWorks() throws Exception {
        RawClient bystander = RawClient.openSession(broker.port());
        bystander.attachSender(0, "bystander");
        bystander.readUntil(Flow.class);
        bystander.attachReceiver(1, RawClient.source("bystander"), true);
        int bad = 200;
        long started = System.nanoTime();
        for (int i = 0; i < bad; i++) {
            try (Socket socket = new Socket("127.0.0.1", broker.port())) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = socket.getInputStream();
                assertThat(in.readAllBytes()).as("the AMQP 1.0 SASL header, then the close").hasSize(8);
            }
            if (i % 50 == 0) {
                roundTrip(bystander, i / 50);
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        await().atMost(Duration.ofSeconds(5)).until(() -> ends().count(ConnectionEnd.PROTOCOL_ERROR) == bad);
        List<String> lines = log.lines(Level.INFO, m -> m.contains(": closed (protocol_error): "));
        assertThat(lines.size()).as("lines for %d bad connections in %.1f s", bad, seconds)
            .isLessThanOrEqualTo(ConnectionEnds.BURST + (int) Math.ceil(seconds * ConnectionEnds.LINES_PER_SECOND));
        // a flood that outlasts one summary's window is counted in more than one summary
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            List<String> summaries = log.lines(Level.INFO,
                m -> m.startsWith("suppressed ") && m.endsWith(": connection closed (protocol_error)"));
            assertThat(summaries).isNotEmpty().allSatisfy(summary -> assertThat(summary)
                .matches("suppressed \\d+ similar messages in the last [0-9.]+ s: connection closed "
                    + "\\(protocol_error\\)"));
            long suppressed = summaries.stream().mapToLong(summary -> Long.parseLong(summary.split(" ")[1])).sum();
            assertThat(suppressed + log.lines(Level.INFO, m -> m.contains(": closed (protocol_error): ")).size())
                .as("every end logged or counted in a summary").isEqualTo(bad);
        });
        roundTrip(bystander, 4);
        bystander.close();
    }

    /** One message through the bystander's own queue, round trip. */
    private static void roundTrip(RawClient bystander, long n) throws Exception {
        bystander.transfer(0, n, Messages.data("alive", null), false);
        bystander.flow(1, n, 1, false, false);
        assertThat(bystander.readUntil(Transfer.class)).isNotNull();
    }
}
