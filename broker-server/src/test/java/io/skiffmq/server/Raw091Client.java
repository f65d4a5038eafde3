package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.impl.AMQImpl;
import com.rabbitmq.client.impl.LongStringHelper;
import com.rabbitmq.client.impl.Method;
import io.skiffmq.server.connection.ConnectionName;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Map;

/**
 * A blocking AMQP 0-9-1 client on a plain socket, for what the RabbitMQ Java client will not send: malformed
 * frames, silence, odd protocol headers. Methods are encoded and decoded by the Java client's own codec
 * ({@code AMQImpl}), so only the deliberately broken bytes are written by hand. Not thread-safe.
 */
final class Raw091Client implements AutoCloseable {
    static final byte[] HEADER_091 = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};
    static final int METHOD = 1;
    static final int HEADER = 2;
    static final int BODY = 3;
    static final int HEARTBEAT = 8;
    static final int FRAME_END = 0xCE;

    /** A frame read from the broker. */
    record Frame(int type, int channel, byte[] payload) {
        Method method() throws IOException {
            assertThat(type).as("frame type").isEqualTo(METHOD);
            return (Method) AMQImpl.readMethodFrom(new DataInputStream(new ByteArrayInputStream(payload)));
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    Raw091Client(String host, int port) throws IOException {
        this(host, port, 0);
    }

    /**
     * @param receiveBuffer the socket's receive buffer, set before it connects (a small window fills fast); 0 for
     *        the default
     */
    Raw091Client(String host, int port, int receiveBuffer) throws IOException {
        socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new java.net.InetSocketAddress(host, port));
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    static Raw091Client connect(Amqp091Target target) throws IOException {
        return new Raw091Client(target.host(), target.port());
    }

    /**
     * Header, start/start-ok (PLAIN guest), tune/tune-ok, open/open-ok on vhost {@code /}: a usable connection.
     * A channel-max or frame-max of 0 takes the broker's (RabbitMQ refuses 0, "no limit", when it has a limit).
     */
    static Raw091Client open(Amqp091Target target, int channelMax, int frameMax, int heartbeat) throws IOException {
        Raw091Client client = connect(target);
        AMQP.Connection.Tune tune = client.start();
        client.tuneOk(channelMax == 0 ? tune.getChannelMax() : channelMax,
            frameMax == 0 ? tune.getFrameMax() : frameMax, heartbeat);
        client.send(0, new AMQP.Connection.Open.Builder().virtualHost("/").build());
        client.expect(AMQP.Connection.OpenOk.class);
        return client;
    }

    /** Header, start, start-ok (PLAIN guest); returns the broker's tune. */
    AMQP.Connection.Tune start() throws IOException {
        writeRaw(HEADER_091);
        expect(AMQP.Connection.Start.class);
        send(0, startOk("PLAIN", LongStringHelper.asLongString("\0guest\0guest")));
        return expect(AMQP.Connection.Tune.class);
    }

    void tuneOk(int channelMax, int frameMax, int heartbeat) throws IOException {
        send(0, new AMQP.Connection.TuneOk.Builder().channelMax(channelMax).frameMax(frameMax).heartbeat(heartbeat)
            .build());
    }

    static AMQP.Connection.StartOk startOk(String mechanism, LongString response) {
        return new AMQP.Connection.StartOk.Builder()
            .clientProperties(Map.of("product", "Raw091Client",
                "capabilities", Map.of("authentication_failure_close", true)))
            .mechanism(mechanism).response(response).locale("en_US").build();
    }

    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Writes one frame; {@code end} is the frame-end octet (0xCE unless a test breaks it). */
    void writeFrame(int type, int channel, byte[] payload, int end) throws IOException {
        out.writeByte(type);
        out.writeShort(channel);
        out.writeInt(payload.length);
        out.write(payload);
        out.writeByte(end);
        out.flush();
    }

    void send(int channel, com.rabbitmq.client.Method method) throws IOException {
        ((Method) method).toFrame(channel).writeTo(out);
        out.flush();
    }

    /** The payload of a method frame: class id, method id, then the arguments as raw bytes. */
    static byte[] methodPayload(int classId, int methodId, byte... arguments) {
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        payload.write(classId >> 8);
        payload.write(classId);
        payload.write(methodId >> 8);
        payload.write(methodId);
        payload.writeBytes(arguments);
        return payload.toByteArray();
    }

    /** Reads the next frame, heartbeats included. */
    Frame read() throws IOException {
        int type = in.readUnsignedByte();
        int channel = in.readUnsignedShort();
        int size = in.readInt();
        assertThat(size).as("frame size").isBetween(0, 1 << 24);
        byte[] payload = new byte[size];
        in.readFully(payload);
        int end = in.readUnsignedByte();
        assertThat(end).as("frame-end octet").isEqualTo(FRAME_END);
        return new Frame(type, channel, payload);
    }

    /** Reads frames, skipping heartbeats, up to the next method, which must be of this type. */
    <T extends com.rabbitmq.client.Method> T expect(Class<T> type) throws IOException {
        Frame frame;
        do {
            frame = read();
        } while (frame.type() == HEARTBEAT);
        Method method = frame.method();
        assertThat(method).as("the broker's next method").isInstanceOf(type);
        return type.cast(method);
    }

    /** Reads raw bytes (a protocol header the broker answers with). */
    byte[] readBytes(int count) throws IOException {
        byte[] bytes = new byte[count];
        in.readFully(bytes);
        return bytes;
    }

    /**
     * Expects {@code connection.close} (heartbeats may come before it), answers {@code close-ok} and expects the
     * broker to close the socket.
     */
    AMQP.Connection.Close expectConnectionClose(int replyCode, String replyTextPrefix) throws IOException {
        AMQP.Connection.Close close = expect(AMQP.Connection.Close.class);
        assertThat(close.getReplyCode()).as("reply code (" + close.getReplyText() + ")").isEqualTo(replyCode);
        assertThat(close.getReplyText()).startsWith(replyTextPrefix);
        try {
            send(0, new AMQP.Connection.CloseOk.Builder().build());
        } catch (SocketException e) {
            // the broker may close the socket without waiting for close-ok (RabbitMQ does after a frame error)
        }
        assertThat(closedByBroker()).as("the broker closes the socket").isTrue();
        return close;
    }

    /**
     * The connection's close after a frame error, then this client hangs up, as a client does that cannot answer:
     * the broker's decoder has stopped, so a close-ok would not reach it, and it waits for the socket to close (or
     * cuts it after the close-ok timeout, which {@code Amqp091FramingTest} checks once).
     */
    AMQP.Connection.Close expectCloseAfterFrameError(int replyCode, String replyTextPrefix) throws IOException {
        AMQP.Connection.Close close = expect(AMQP.Connection.Close.class);
        assertThat(close.getReplyCode()).as("reply code (" + close.getReplyText() + ")").isEqualTo(replyCode);
        assertThat(close.getReplyText()).startsWith(replyTextPrefix);
        socket.close();
        return close;
    }

    /** Whether the broker closes the socket (reads to end of stream, ignoring heartbeats) within the timeout. */
    boolean closedByBroker() throws IOException {
        try {
            while (true) {
                Frame frame = read();
                assertThat(frame.type()).as("only heartbeats before the end").isEqualTo(HEARTBEAT);
            }
        } catch (EOFException | SocketException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    /** Resets the connection: SO_LINGER 0 makes the close send an RST instead of a FIN. */
    void reset() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    /** The connection's name as the broker logs it ({@link ConnectionName}): our address, then the broker's. */
    String name() {
        return "127.0.0.1:" + socket.getLocalPort() + " -> 127.0.0.1:" + socket.getPort();
    }

    void soTimeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    Socket socket() {
        return socket;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
