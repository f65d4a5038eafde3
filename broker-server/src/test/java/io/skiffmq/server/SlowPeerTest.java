package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.HandshakeDeadline;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Peers that trickle their handshake a byte at a time: bytes keep arriving, but the handshake timeout runs from
 * the connect, not from the last byte, so each is closed all the same (as RabbitMQ's {@code handshake_timeout}),
 * for AMQP 1.0 (in the protocol header, in SASL, between SASL and {@code open}) and 0-9-1 (in the header, in
 * {@code start-ok}). The idle timeout after the handshake is {@code LifecycleTest}'s and
 * {@code Amqp091ConnectionTest}'s.
 */
@ExtendWith(LeakDetection.class)
class SlowPeerTest {
    private static final int TIMEOUT_MILLIS = 1000;
    /**
     * The longest a trickling peer may last: the handshake timeout (from the accept, through the header and the
     * protocol's handshake: {@link HandshakeDeadline}), plus room for a busy machine.
     */
    private static final long CLOSED_WITHIN_MILLIS = TIMEOUT_MILLIS + 1500;
    private static final long BYTE_EVERY_MILLIS = 50;
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("handshake-timeout=" + TIMEOUT_MILLIS);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void aPeerTricklingTheProtocolHeaderIsClosed() throws Exception {
        // one byte every 300 ms: the 8-byte header would take 2.4 s
        assertClosedWhileTrickling(new byte[0], new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}, 300);
    }

    @Test
    void aPeerTricklingItsSaslInitIsClosed() throws Exception {
        byte[] saslHeader = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
        // a sasl-init frame announcing 4 KiB, then its bytes, slowly: never complete within the timeout
        byte[] frame = new byte[4096];
        frame[2] = 0x10; // size 4096
        frame[4] = 2;    // doff
        frame[5] = 1;    // SASL frame
        assertClosedWhileTrickling(saslHeader, frame, BYTE_EVERY_MILLIS);
    }

    @Test
    void aPeerTricklingAfterSaslIsClosed() throws Exception {
        byte[] anonymous = hex("414d515003010000" + "0000001902010000" + "005341c00c01a309414e4f4e594d4f5553"
            + "414d515000010000");
        // SASL header, init ANONYMOUS, the AMQP header, then an open frame's bytes one at a time
        byte[] open = new byte[4096];
        open[2] = 0x10;
        open[4] = 2;
        assertClosedWhileTrickling(anonymous, open, BYTE_EVERY_MILLIS);
    }

    @Test
    void anAmqp091PeerTricklingItsHeaderIsClosed() throws Exception {
        assertClosedWhileTrickling(new byte[0], new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1}, 300);
    }

    @Test
    void anAmqp091PeerTricklingStartOkIsClosed() throws Exception {
        byte[] header = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};
        // a method frame announcing 4 KiB on channel 0 (start-ok would be class 10 method 11), slowly
        byte[] frame = new byte[4096];
        frame[0] = 1;
        frame[5] = 0x10;
        frame[7] = 10;
        frame[9] = 11;
        assertClosedWhileTrickling(header, frame, BYTE_EVERY_MILLIS);
    }

    /**
     * Sends {@code first} at once, then {@code trickled} a byte every {@code everyMillis} (what the broker sends
     * back is read and dropped), until the broker closes the connection; fails when it does not within
     * {@link #CLOSED_WITHIN_MILLIS}, or when the trickle ran out first.
     */
    private static void assertClosedWhileTrickling(byte[] first, byte[] trickled, long everyMillis)
            throws IOException {
        long start = System.nanoTime();
        int sent = 0;
        boolean closed = false;
        try (Socket socket = new Socket("127.0.0.1", broker.port())) {
            socket.setSoTimeout((int) everyMillis);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(first);
            byte[] sink = new byte[8192];
            while (!closed && sent < trickled.length
                    && TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 2 * CLOSED_WITHIN_MILLIS) {
                try {
                    out.write(trickled[sent]);
                    out.flush();
                    sent++;
                } catch (IOException reset) {
                    closed = true;
                    break;
                }
                try {
                    closed = in.read(sink) < 0;
                } catch (SocketTimeoutException stillOpen) {
                    // nothing from the broker this time: trickle on
                } catch (IOException reset) {
                    closed = true;
                }
            }
        }
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(sent).as("bytes trickled before the close").isLessThan(trickled.length).isPositive();
        assertThat(closed).as("closed by the broker").isTrue();
        assertThat(elapsed).as("ms until the close").isGreaterThanOrEqualTo(TIMEOUT_MILLIS - 50)
            .isLessThan(CLOSED_WITHIN_MILLIS);
    }

    private static byte[] hex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }
}
