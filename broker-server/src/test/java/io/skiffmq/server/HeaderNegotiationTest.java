package io.skiffmq.server;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.config.BrokerConfig;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Protocol header negotiation [2.2], [5.3.2], and what a malformed first frame gets. */
@ExtendWith(LeakDetection.class)
class HeaderNegotiationTest {
    private static final byte[] SASL_HEADER = hex("41 4d 51 50 03 01 00 00");
    private static final byte[] AMQP_HEADER = hex("41 4d 51 50 00 01 00 00");
    private static RunningBroker saslOnly;
    private static RunningBroker plainAllowed;

    @BeforeAll
    static void start() throws Exception {
        saslOnly = RunningBroker.start();
        plainAllowed = RunningBroker.start("allow-plain-amqp=true");
    }

    @AfterAll
    static void stop() {
        saslOnly.close();
        plainAllowed.close();
    }

    @Test
    void saslHeaderIsAnsweredWithTheMechanisms() throws Exception {
        try (RawClient client = new RawClient(saslOnly.port())) {
            client.writeRaw(SASL_HEADER);
            client.expectBytes(SASL_HEADER);
            SaslMechanisms mechanisms = client.read().as(SaslMechanisms.class);
            // ANONYMOUS by default, as RabbitMQ 4 (logging in as guest, so from loopback only)
            assertThat(mechanisms.getSaslServerMechanisms()).extracting(Object::toString)
                .containsExactly("PLAIN", "ANONYMOUS");
        }
    }

    @Test
    void aHeaderAndGarbageInOneSegmentGetTheHeaderBackBeforeTheClose() throws Exception {
        byte[] garbage = hex("de ad be ef de ad be ef");
        for (RunningBroker broker : new RunningBroker[] {saslOnly, plainAllowed}) {
            byte[] header = broker == saslOnly ? SASL_HEADER : AMQP_HEADER;
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", broker.port())) {
                socket.setSoTimeout(10_000);
                byte[] both = new byte[16];
                System.arraycopy(header, 0, both, 0, 8);
                System.arraycopy(garbage, 0, both, 8, 8);
                socket.getOutputStream().write(both); // one write: header and garbage in the same segment
                byte[] reply = socket.getInputStream().readAllBytes(); // up to the broker's close
                assertThat(reply.length).isGreaterThanOrEqualTo(8);
                assertThat(java.util.Arrays.copyOf(reply, 8)).isEqualTo(header);
            }
        }
    }

    @Test
    void tlsPlainAndForeignHeadersAreAnsweredWithTheSaslHeaderAndClosed() throws Exception {
        for (byte[] hello : new byte[][] {hex("41 4d 51 50 02 01 00 00"), AMQP_HEADER,
            "GET / HTTP/1.1\r\n\r\n".getBytes()}) {
            try (RawClient client = new RawClient(saslOnly.port())) {
                client.writeRaw(hello);
                client.expectBytes(SASL_HEADER);
                assertThat(client.closedByBroker()).isTrue();
            }
        }
    }

    @Test
    void otherAmqpVersionsAreAnsweredWithThe091HeaderAndClosed() throws Exception {
        // AMQP 0-8 as RabbitMQ's clients of old sent it, and a 0-10 header (0-9 is taken as 0-9-1, as RabbitMQ does)
        for (byte[] hello : new byte[][] {hex("41 4d 51 50 01 01 08 00"), hex("41 4d 51 50 01 01 00 0a")}) {
            try (RawClient client = new RawClient(saslOnly.port())) {
                client.writeRaw(hello);
                client.expectBytes(hex("41 4d 51 50 00 00 09 01"));
                assertThat(client.closedByBroker()).isTrue();
            }
        }
    }

    @Test
    void the091HeaderStartsAnAmqp091Connection() throws Exception {
        try (RawClient client = new RawClient(saslOnly.port())) {
            client.writeRaw(hex("41 4d 51 50 00 00 09 01"));
            // a method frame on channel 0: connection.start (class 10, method 10), version 0-9
            client.expectBytes(hex("01 00 00"));
            client.readRaw(4); // the frame's size
            client.expectBytes(hex("00 0a 00 0a 00 09"));
        }
    }

    @Test
    void anAmqpHeaderBeforeSaslSucceededClosesTheConnection() throws Exception {
        try (RawClient client = new RawClient(saslOnly.port())) {
            client.writeRaw(SASL_HEADER);
            client.expectBytes(SASL_HEADER);
            client.read().as(SaslMechanisms.class);
            client.writeRaw(AMQP_HEADER);
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void plainAmqpWhenAllowedOpens() throws Exception {
        try (RawClient client = new RawClient(plainAllowed.port())) {
            client.writeRaw(AMQP_HEADER);
            client.expectBytes(AMQP_HEADER);
            assertThat(client.open().getContainerId()).startsWith("skiffmq@");
        }
    }

    @Test
    void aMalformedFrameClosesWithDecodeError() throws Exception {
        try (RawClient client = new RawClient(plainAllowed.port())) {
            client.writeRaw(AMQP_HEADER);
            client.expectBytes(AMQP_HEADER);
            // an open whose list claims 255 elements in 2 bytes
            client.writeRaw(hex("00 00 00 0f 02 00 00 00 00 53 10 c0 02 ff 40"));
            client.read().as(Open.class);
            Close close = client.read().as(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.DECODE_ERROR.symbol());
            assertThat(close.getError().getDescription()).contains("BAD_COUNT");
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void anOversizedFirstFrameClosesWithFramingError() throws Exception {
        try (RawClient client = new RawClient(plainAllowed.port())) {
            client.writeRaw(AMQP_HEADER);
            client.expectBytes(AMQP_HEADER);
            client.writeRaw(hex("00 10 00 00 02 00 00 00"));
            client.read().as(Open.class);
            Close close = client.read().as(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.FRAMING_ERROR.symbol());
        }
    }

    @Test
    void configurationRejectsBadSettings() {
        assertThatThrownBy(() -> BrokerConfig.from(new String[] {"--port=70000"}, new Properties()))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BrokerConfig.from(new String[] {"--nonsense=1"}, new Properties()))
            .hasMessageContaining("unknown setting");
        assertThatThrownBy(() -> BrokerConfig.from(new String[] {"--max-frame-size=100"}, new Properties()))
            .hasMessageContaining("max-frame-size");
        BrokerConfig config = BrokerConfig.from(new String[] {"--port=5673", "--allow-plain-amqp=true"},
            new Properties());
        assertThat(config.port()).isEqualTo(5673);
        assertThat(config.allowPlainAmqp()).isTrue();
        assertThat(BrokerConfig.defaults().port()).isEqualTo(5672);
        assertThat(BrokerConfig.defaults().dataDir()).isEqualTo(Path.of("data"));
    }
}
