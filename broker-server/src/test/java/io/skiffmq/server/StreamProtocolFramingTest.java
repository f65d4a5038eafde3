package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Bad frames on port 5552 get RabbitMQ's answers, whatever TCP segments they share with good ones: before
 * {@code open} the socket closes without a word; after it, {@code close} 0x0d (a frame RabbitMQ cannot parse) or
 * 0x0e (over the frame-max agreed). A frame cut in the same read as the handshake, while the login is still being
 * checked, is judged after the handshake, where it stands.
 */
@ExtendWith(LeakDetection.class)
class StreamProtocolFramingTest {
    private static RunningBroker broker;
    /** A client's handshake up to {@code open} (the codec corpus' first valid conversation: guest, vhost /). */
    private static byte[] handshake;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("stream-frame-max=65536");
        Path corpus = null;
        for (Path dir = Path.of("").toAbsolutePath(); dir != null && corpus == null; dir = dir.getParent()) {
            Path candidate = dir.resolve(StreamCorpusReplayTest.CORPUS);
            corpus = java.nio.file.Files.isDirectory(candidate) ? candidate : null;
        }
        handshake = CorpusReplay.read(corpus.resolve("valid-00"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Writes {@code parts} in one write and reads until the broker closes; what it sent, as an outcome. */
    private static String exchange(byte[]... parts) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.write(part);
        }
        try (Socket socket = new Socket("127.0.0.1", broker.streamPort())) {
            socket.setSoTimeout((int) StreamClients.TIMEOUT.toMillis());
            socket.getOutputStream().write(out.toByteArray());
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            try {
                // until the broker closes, or its close frame is in (the broker waits for an answer to it)
                for (int n; !ReplayOutcomes.stream(received.toByteArray()).startsWith("close ")
                        && (n = in.read(buffer)) >= 0; ) {
                    received.write(buffer, 0, n);
                }
            } catch (java.net.SocketException e) {
                // closed with our bytes unread: the kernel resets the connection
                return received.size() == 0 ? "reset" : ReplayOutcomes.stream(received.toByteArray()) + ", reset";
            }
            return ReplayOutcomes.stream(received.toByteArray());
        }
    }

    /** A frame: size, key, version, then {@code body}. */
    private static byte[] frame(int key, int version, byte[] body) {
        return ByteBuffer.allocate(8 + body.length).putInt(4 + body.length).putShort((short) key)
            .putShort((short) version).put(body).array();
    }

    @Test
    void aFrameWithAnUnknownKeyAfterOpenIsClosedWith0x0dEvenInTheHandshakesRead() throws Exception {
        assertThat(exchange(handshake, frame(0x0077, 1, new byte[4]))).isEqualTo("close 0x0d");
        // a command only a server sends (publish confirm)
        assertThat(exchange(handshake, frame(0x0003, 1, new byte[] {1, 0, 0, 0, 0}))).isEqualTo("close 0x0d");
        // a subscribe whose fields are cut short
        assertThat(exchange(handshake, frame(0x0007, 1, new byte[] {0, 0, 0, 9, 1}))).isEqualTo("close 0x0d");
    }

    @Test
    void aFrameOverTheAgreedFrameMaxIsClosedWith0x0e() throws Exception {
        // the corpus' handshake asks for 1 MiB, the broker offers 64 KiB: the smaller holds
        assertThat(exchange(handshake, frame(0x0017, 1, new byte[70_000]))).isEqualTo("close 0x0e");
    }

    @Test
    void beforeOpenABadFrameClosesTheSocketWithoutAWord() throws Exception {
        for (byte[] input : List.of(frame(0x0011, 1, new byte[9000]), frame(0x7777, 1, new byte[4]),
                new byte[] {0, 0, 0, 1, 0}, "GET / HTTP/1.1\r\n\r\n".getBytes())) {
            // as RabbitMQ, closed at once: what the client sent beyond may turn that into a reset
            assertThat(exchange(input)).isIn("closed, no bytes", "reset");
        }
    }
}
