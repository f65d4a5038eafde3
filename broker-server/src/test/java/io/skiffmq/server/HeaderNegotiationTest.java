package io.skiffmq.server;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The listener over a real socket on an ephemeral port: protocol header negotiation [2.2], [5.3.2]. */
@ExtendWith(LeakDetection.class)
class HeaderNegotiationTest {
    private static final byte[] SASL_HEADER = hex("41 4d 51 50 03 01 00 00");
    private static final byte[] AMQP_HEADER = hex("41 4d 51 50 00 01 00 00");

    @TempDir
    Path dataDir;
    private AmqpListener listener;

    private InetSocketAddress start(boolean allowPlain) throws InterruptedException {
        BrokerConfig config = BrokerConfig.defaults().withPort(0).withDataDir(dataDir).withAllowPlainAmqp(allowPlain);
        listener = new AmqpListener(config);
        InetSocketAddress bound = listener.start();
        return new InetSocketAddress("127.0.0.1", bound.getPort());
    }

    @AfterEach
    void stop() {
        if (listener != null) {
            listener.close();
        }
    }

    private static Socket connect(InetSocketAddress address) throws IOException {
        Socket socket = new Socket(address.getAddress(), address.getPort());
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static byte[] read(InputStream in, int n) throws IOException {
        byte[] bytes = new byte[n];
        new DataInputStream(in).readFully(bytes);
        return bytes;
    }

    /** Reads one frame and decodes its body with the broker's own codec. */
    private static Object readFrame(InputStream in, boolean sasl) throws Exception {
        byte[] header = read(in, 8);
        int size = Unpooled.wrappedBuffer(header).getInt(0);
        ByteBuf body = Unpooled.wrappedBuffer(read(in, size - 8));
        PerformativeCodec codec = new PerformativeCodec();
        return sasl ? codec.decodeSasl(body) : codec.decode(body);
    }

    private static void write(Socket socket, Object performative, int type) throws IOException {
        ByteBuf out = Unpooled.buffer();
        PerformativeCodec.writeFrame(out, type, 0, performative, 0);
        socket.getOutputStream().write(out.array(), out.arrayOffset(), out.readableBytes());
    }

    private static void assertClosedByBroker(InputStream in) throws IOException {
        int next = in.read();
        assertThat(next).as("end of stream").isEqualTo(-1);
    }

    @Test
    void saslHeaderIsAnsweredWithSaslMechanisms() throws Exception {
        try (Socket socket = connect(start(false))) {
            socket.getOutputStream().write(SASL_HEADER);
            InputStream in = socket.getInputStream();
            assertThat(read(in, 8)).isEqualTo(SASL_HEADER);
            SaslMechanisms mechanisms = (SaslMechanisms) readFrame(in, true);
            assertThat(mechanisms.getSaslServerMechanisms()).contains(Symbol.valueOf("PLAIN"));

            SaslInit init = new SaslInit();
            init.setMechanism(Symbol.valueOf("PLAIN"));
            init.setInitialResponse(new Binary("\0guest\0guest".getBytes()));
            write(socket, init, AmqpFrame.TYPE_SASL);
            SaslOutcome outcome = (SaslOutcome) readFrame(in, true);
            assertThat(outcome.getCode()).isEqualTo(SaslCode.SYS_PERM);
            assertClosedByBroker(in);
        }
    }

    @Test
    void anAmqpHeaderBeforeSaslSucceededClosesTheConnection() throws Exception {
        try (Socket socket = connect(start(false))) {
            socket.getOutputStream().write(SASL_HEADER);
            InputStream in = socket.getInputStream();
            assertThat(read(in, 8)).isEqualTo(SASL_HEADER);
            assertThat(readFrame(in, true)).isInstanceOf(SaslMechanisms.class);
            socket.getOutputStream().write(AMQP_HEADER);
            assertClosedByBroker(in);
        }
    }

    @Test
    void tlsAndPlainAndForeignHeadersAreAnsweredWithTheSaslHeaderAndClosed() throws Exception {
        InetSocketAddress address = start(false);
        for (byte[] hello : new byte[][] {hex("41 4d 51 50 02 01 00 00"), AMQP_HEADER, hex("41 4d 51 50 00 00 09 01"),
            "GET / HTTP/1.1\r\n\r\n".getBytes()}) {
            try (Socket socket = connect(address)) {
                socket.getOutputStream().write(hello);
                InputStream in = socket.getInputStream();
                assertThat(read(in, 8)).isEqualTo(SASL_HEADER);
                assertClosedByBroker(in);
            }
        }
    }

    @Test
    void plainAmqpWhenAllowedRefusesOpenWithNotImplemented() throws Exception {
        try (Socket socket = connect(start(true))) {
            socket.getOutputStream().write(AMQP_HEADER);
            InputStream in = socket.getInputStream();
            assertThat(read(in, 8)).isEqualTo(AMQP_HEADER);
            Open open = new Open();
            open.setContainerId("test-client");
            write(socket, open, AmqpFrame.TYPE_AMQP);
            assertThat(readFrame(in, false)).isInstanceOf(Open.class);
            Close close = (Close) readFrame(in, false);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.NOT_IMPLEMENTED.symbol());
            assertClosedByBroker(in);
        }
    }

    @Test
    void aMalformedFrameClosesWithItsCondition() throws Exception {
        try (Socket socket = connect(start(true))) {
            socket.getOutputStream().write(AMQP_HEADER);
            InputStream in = socket.getInputStream();
            assertThat(read(in, 8)).isEqualTo(AMQP_HEADER);
            // an open whose list claims 255 elements in 3 bytes
            socket.getOutputStream().write(hex("00 00 00 0f 02 00 00 00 00 53 10 c0 02 ff 40"));
            assertThat(readFrame(in, false)).isInstanceOf(Open.class);
            Close close = (Close) readFrame(in, false);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.DECODE_ERROR.symbol());
            assertThat(close.getError().getDescription()).contains("BAD_COUNT");
            assertClosedByBroker(in);
        }
    }

    @Test
    void anOversizedFrameClosesWithFramingError() throws Exception {
        try (Socket socket = connect(start(true))) {
            socket.getOutputStream().write(AMQP_HEADER);
            InputStream in = socket.getInputStream();
            assertThat(read(in, 8)).isEqualTo(AMQP_HEADER);
            socket.getOutputStream().write(hex("00 10 00 00 02 00 00 00"));
            assertThat(readFrame(in, false)).isInstanceOf(Open.class);
            Close close = (Close) readFrame(in, false);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.FRAMING_ERROR.symbol());
            assertClosedByBroker(in);
        } catch (EOFException e) {
            throw new AssertionError("broker closed without a close frame", e);
        }
    }

    @Test
    void configurationRejectsBadSettings() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> BrokerConfig.from(new String[] {"--port=70000"}, new java.util.Properties()))
            .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> BrokerConfig.from(new String[] {"--nonsense=1"}, new java.util.Properties()))
            .hasMessageContaining("unknown setting");
        BrokerConfig config = BrokerConfig.from(new String[] {"--port=5673", "--allow-plain-amqp=true"},
            new java.util.Properties());
        assertThat(config.port()).isEqualTo(5673);
        assertThat(config.allowPlainAmqp()).isTrue();
        assertThat(BrokerConfig.defaults().port()).isEqualTo(5672);
        assertThat(BrokerConfig.defaults().dataDir()).isEqualTo(Path.of("data"));
    }
}
