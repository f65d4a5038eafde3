package io.skiffmq.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.server.connection.ConnectionName;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.transport.Transfer;

/**
 * A blocking AMQP 1.0 test client that writes and reads frames one by one, with proton-j's performative objects
 * encoded through the broker's own codec. It hides nothing: tests see and count every frame, which is what the
 * credit, abuse and byte-exactness tests need. Not thread-safe.
 */
final class RawClient implements AutoCloseable {
    private static final byte[] SASL_HEADER = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
    private static final byte[] AMQP_HEADER = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};

    /** A frame read from the broker. */
    record Frame(int type, int channel, Object body, byte[] payload) {
        <T> T as(Class<T> type) {
            if (!type.isInstance(body)) {
                throw new AssertionError("expected " + type.getSimpleName() + ", got " + body);
            }
            return type.cast(body);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    /** Transfer frames received and sent on channel 0: the session's next-incoming-id and next-outgoing-id. */
    private long transfersReceived;
    private long transfersSent;

    RawClient(int port) throws IOException {
        this(port, 0);
    }

    /**
     * @param receiveBuffer the socket's receive buffer, set before it connects (a small window fills fast); 0 for
     *        the default
     */
    RawClient(int port, int receiveBuffer) throws IOException {
        socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new java.net.InetSocketAddress("127.0.0.1", port));
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream(), 1 << 16));
        // writes are buffered and go out before every read, so a burst of frames costs one system call
        out = new java.io.BufferedOutputStream(socket.getOutputStream(), 1 << 16);
    }

    /** Connects and authenticates as guest, opens, and begins a session on channel 0. */
    static RawClient openSession(int port) throws IOException {
        RawClient client = new RawClient(port);
        client.sasl("guest", "guest");
        client.open();
        client.begin();
        return client;
    }

    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    byte[] readRaw(int n) throws IOException {
        out.flush();
        byte[] bytes = new byte[n];
        in.readFully(bytes);
        return bytes;
    }

    /** SASL PLAIN; returns the outcome code (0 = ok). Leaves the connection ready for {@link #open()} on success. */
    int sasl(String user, String password) throws IOException {
        writeRaw(SASL_HEADER);
        expectBytes(SASL_HEADER);
        read(); // sasl-mechanisms
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("PLAIN"));
        init.setInitialResponse(new Binary(("\0" + user + "\0" + password).getBytes()));
        write(AmqpFrame.TYPE_SASL, 0, init, null);
        SaslOutcome outcome = read().as(SaslOutcome.class);
        if (outcome.getCode().ordinal() == 0) {
            writeRaw(AMQP_HEADER);
            expectBytes(AMQP_HEADER);
        }
        return outcome.getCode().ordinal();
    }

    /** Starts SASL: sends the SASL header and returns the mechanisms the broker offers. */
    Symbol[] saslMechanisms() throws IOException {
        writeRaw(SASL_HEADER);
        expectBytes(SASL_HEADER);
        return read().as(org.apache.qpid.proton.amqp.security.SaslMechanisms.class).getSaslServerMechanisms();
    }

    /** SASL ANONYMOUS after {@link #saslMechanisms()}; returns the outcome code (0 = ok, then the AMQP header). */
    int saslAnonymous() throws IOException {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("ANONYMOUS"));
        init.setInitialResponse(new Binary(new byte[0]));
        write(AmqpFrame.TYPE_SASL, 0, init, null);
        SaslOutcome outcome = read().as(SaslOutcome.class);
        if (outcome.getCode().ordinal() == 0) {
            writeRaw(AMQP_HEADER);
            expectBytes(AMQP_HEADER);
        }
        return outcome.getCode().ordinal();
    }

    Open open() throws IOException {
        return open(null);
    }

    /** Opens with {@code hostname} ({@code vhost:NAME} picks a virtual host); returns the broker's open. */
    Open open(String hostname) throws IOException {
        Open open = new Open();
        open.setContainerId("raw-client");
        open.setHostname(hostname);
        write(0, open);
        return read().as(Open.class);
    }

    Begin begin() throws IOException {
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(100_000));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(100_000));
        write(0, begin);
        return read().as(Begin.class);
    }

    /**
     * Attaches a publisher link, {@code snd-settle-mode} mixed (each transfer says whether it is settled); returns
     * the broker's attach (a detach follows when it refused).
     */
    Attach attachSender(int handle, String address) throws IOException {
        return attachSender(handle, address, SenderSettleMode.MIXED);
    }

    /** A publisher link whose transfers promise {@code mode}; {@code address} null for the anonymous relay. */
    Attach attachSender(int handle, String address, SenderSettleMode mode) throws IOException {
        return attachSenderAnswer(handle, address, mode).as(Attach.class);
    }

    /** The same, answered with any frame (an attach, or the end of the session). */
    Frame attachSenderAnswer(int handle, String address, SenderSettleMode mode) throws IOException {
        Attach attach = new Attach();
        attach.setName("sender-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.SENDER);
        attach.setSndSettleMode(mode);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        attach.setSource(new Source());
        Target target = new Target();
        target.setAddress(address);
        attach.setTarget(target);
        write(0, attach);
        return read();
    }

    /** Attaches a consumer link for {@code source} (configured by the caller); returns the broker's attach. */
    Attach attachReceiver(int handle, Source source, boolean preSettled) throws IOException {
        return attachReceiverAnswer(handle, source, preSettled).as(Attach.class);
    }

    /** The same, answered with any frame (an attach, or the end of the session). */
    Frame attachReceiverAnswer(int handle, Source source, boolean preSettled) throws IOException {
        Attach attach = new Attach();
        attach.setName("receiver-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.RECEIVER);
        attach.setSndSettleMode(preSettled ? SenderSettleMode.SETTLED : SenderSettleMode.UNSETTLED);
        attach.setSource(source);
        attach.setTarget(new Target());
        write(0, attach);
        return read();
    }

    static Source source(String address) {
        Source source = new Source();
        source.setAddress(address);
        return source;
    }

    void flow(int handle, long deliveryCount, long credit, boolean drain, boolean echo) throws IOException {
        Flow flow = new Flow();
        // [2.5.6] the broker computes our window from next-incoming-id: report what we have received
        flow.setNextIncomingId(UnsignedInteger.valueOf(transfersReceived & 0xffffffffL));
        flow.setIncomingWindow(UnsignedInteger.valueOf(100_000));
        flow.setNextOutgoingId(UnsignedInteger.valueOf(transfersSent & 0xffffffffL));
        flow.setOutgoingWindow(UnsignedInteger.valueOf(100_000));
        flow.setHandle(UnsignedInteger.valueOf(handle));
        flow.setDeliveryCount(UnsignedInteger.valueOf(deliveryCount));
        flow.setLinkCredit(UnsignedInteger.valueOf(credit));
        flow.setDrain(drain);
        flow.setEcho(echo);
        write(0, flow);
    }

    void transfer(int handle, long deliveryId, byte[] message, boolean settled) throws IOException {
        transfer(handle, deliveryId, message, settled, null);
    }

    /** A transfer with a delivery {@code state} (a transactional-state, for one). */
    void transfer(int handle, long deliveryId, byte[] message, boolean settled,
            org.apache.qpid.proton.amqp.transport.DeliveryState state) throws IOException {
        Transfer transfer = new Transfer();
        transfer.setState(state);
        transfer.setHandle(UnsignedInteger.valueOf(handle));
        transfer.setDeliveryId(UnsignedInteger.valueOf(deliveryId));
        transfer.setDeliveryTag(new Binary(Long.toString(deliveryId).getBytes()));
        transfer.setMessageFormat(UnsignedInteger.ZERO);
        transfer.setSettled(settled);
        write(AmqpFrame.TYPE_AMQP, 0, transfer, message);
        transfersSent++;
    }

    void write(int channel, Object performative) throws IOException {
        write(AmqpFrame.TYPE_AMQP, channel, performative, null);
    }

    void write(int type, int channel, Object performative, byte[] payload) throws IOException {
        ByteBuf buf = Unpooled.buffer();
        PerformativeCodec.writeFrame(buf, type, channel, performative, payload == null ? 0 : payload.length);
        if (payload != null) {
            buf.writeBytes(payload);
        }
        out.write(buf.array(), buf.arrayOffset(), buf.readableBytes());
    }

    /** The next non-empty frame. */
    Frame read() throws IOException {
        out.flush();
        while (true) {
            int size = in.readInt();
            int doff = in.readUnsignedByte();
            int type = in.readUnsignedByte();
            int channel = in.readUnsignedShort();
            in.skipBytes(doff * 4 - 8);
            byte[] body = readRaw(size - doff * 4);
            if (body.length == 0) {
                continue;
            }
            if (channel == 0 && type == AmqpFrame.TYPE_AMQP && body.length > 2 && body[2] == 0x14) {
                transfersReceived++;
            }
            ByteBuf buf = Unpooled.wrappedBuffer(body);
            try {
                int end = io.skiffmq.codec.amqp10.TypeReader.valueEnd(buf, 0, body.length);
                Object performative = ProtonCodec.current().decode(buf, 0, end);
                return new Frame(type, channel, performative, Arrays.copyOfRange(body, end, body.length));
            } catch (io.skiffmq.codec.amqp10.AmqpDecodeException e) {
                throw new IOException("broker sent a frame that does not decode: " + e.getMessage(), e);
            }
        }
    }

    private Close lastClose;

    /** Reads frames, counting empty ones, until one of {@code type}; a close read is kept for {@link #lastClose()}. */
    int countEmptyFramesUntil(Class<?> type) throws IOException {
        int empty = 0;
        out.flush();
        while (true) {
            int size = in.readInt();
            int doff = in.readUnsignedByte();
            in.skipBytes(3 + doff * 4 - 8);
            byte[] body = readRaw(size - doff * 4);
            if (body.length == 0) {
                empty++;
                continue;
            }
            ByteBuf buf = Unpooled.wrappedBuffer(body);
            try {
                Object performative = ProtonCodec.current().decode(buf, 0,
                    io.skiffmq.codec.amqp10.TypeReader.valueEnd(buf, 0, body.length));
                if (performative instanceof Close close) {
                    lastClose = close;
                }
                if (type.isInstance(performative)) {
                    return empty;
                }
            } catch (io.skiffmq.codec.amqp10.AmqpDecodeException e) {
                throw new IOException(e);
            }
        }
    }

    Close lastClose() {
        return lastClose;
    }

    /** Reads frames until one of {@code type} arrives; the others are dropped. */
    <T> T readUntil(Class<T> type) throws IOException {
        while (true) {
            Frame frame = read();
            if (type.isInstance(frame.body())) {
                return type.cast(frame.body());
            }
        }
    }

    /** True when no frame arrives within {@code millis} (the broker sent nothing). */
    boolean silentFor(int millis) throws IOException {
        out.flush();
        socket.setSoTimeout(millis);
        try {
            read();
            return false;
        } catch (SocketTimeoutException e) {
            return true;
        } finally {
            socket.setSoTimeout(10_000);
        }
    }

    /** True once the broker has closed the socket (reads to the end). */
    boolean closedByBroker() throws IOException {
        try {
            while (true) {
                read();
            }
        } catch (EOFException e) {
            return true;
        }
    }

    void expectBytes(byte[] expected) throws IOException {
        byte[] actual = readRaw(expected.length);
        if (!Arrays.equals(actual, expected)) {
            throw new AssertionError("expected " + Arrays.toString(expected) + ", got " + Arrays.toString(actual));
        }
    }

    static Map<Symbol, Object> properties(Open open) {
        @SuppressWarnings("unchecked")
        Map<Symbol, Object> properties = (Map<Symbol, Object>) open.getProperties();
        return properties;
    }

    void close(boolean sendClose) throws IOException {
        if (sendClose) {
            write(0, new Close());
            out.flush();
        }
        socket.close();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Sends what was written (writes are buffered until the next read). */
    void flush() throws IOException {
        out.flush();
    }

    Socket socket() {
        return socket;
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

    static Detach detach(int handle, boolean closed) {
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(handle));
        detach.setClosed(closed);
        return detach;
    }

    static Disposition accept(long first, long last) {
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.valueOf(first));
        d.setLast(UnsignedInteger.valueOf(last));
        d.setSettled(true);
        d.setState(org.apache.qpid.proton.amqp.messaging.Accepted.getInstance());
        return d;
    }
}
