package io.skiffmq.server;

import io.skiffmq.server.amqp10.Amqp10ConnectionHandler;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.auth.UserStore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.amqp10.TypeReader;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.config.BrokerConfig;
import java.util.ArrayDeque;
import java.util.EnumSet;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;

/**
 * One broker connection in an {@link EmbeddedChannel}, run by the test thread, with its queues on a
 * {@link SteppedExecutor}: queue work (and so confirms and deliveries) happens only when the test calls
 * {@link SteppedExecutor#runAll()}. For the cases that depend on what the queue has not done yet.
 */
final class EmbeddedConnection implements AutoCloseable {
    /** Runs queue tasks only when told to. */
    static final class SteppedExecutor implements QueueExecutor {
        private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
        private boolean running;

        @Override
        public boolean inExecutor() {
            return running;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        void runAll() {
            running = true;
            try {
                for (Runnable task; (task = tasks.poll()) != null; ) {
                    task.run();
                }
            } finally {
                running = false;
            }
        }
    }

    final SteppedExecutor queues = new SteppedExecutor();
    private final EmbeddedChannel channel;
    private final ByteBuf received = Unpooled.buffer();

    private final Broker broker;
    private final java.nio.file.Path dataDir;

    EmbeddedConnection(String... settings) throws java.io.IOException {
        this(null, io.skiffmq.core.time.BrokerClock.SYSTEM, settings);
    }

    /**
     * A connection whose queues run their work at once on the calling thread, which is the connection's too: as
     * when a queue lives on its consumer's own event loop.
     */
    static EmbeddedConnection withQueuesInline(String... settings) throws java.io.IOException {
        return new EmbeddedConnection(QueueExecutor.CALLER_THREAD, io.skiffmq.core.time.BrokerClock.SYSTEM, settings);
    }

    /** The same, with the broker's time on {@code clock}. */
    static EmbeddedConnection withQueuesInline(io.skiffmq.core.time.BrokerClock clock, String... settings)
            throws java.io.IOException {
        return new EmbeddedConnection(QueueExecutor.CALLER_THREAD, clock, settings);
    }

    private EmbeddedConnection(QueueExecutor queueExecutor, io.skiffmq.core.time.BrokerClock clock,
            String... settings) throws java.io.IOException {
        dataDir = java.nio.file.Files.createTempDirectory("skiffmq-embedded");
        BrokerConfig config = BrokerConfig.defaults().with("data-dir", dataDir.toString());
        for (String setting : settings) {
            int eq = setting.indexOf('=');
            config = config.with(setting.substring(0, eq), setting.substring(eq + 1));
        }
        UserStore users = UserStore.withGuest();
        broker = new Broker(config, users, () -> queueExecutor == null ? queues : queueExecutor, clock);
        channel = new EmbeddedChannel(
            new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.SASL), config.initialMaxFrameSize()),
            new Amqp10ConnectionHandler(broker, SaslAuthenticator.inline(users, null)));
    }

    /** SASL as guest, open, begin on channel 0. */
    EmbeddedConnection handshake() throws Exception {
        return handshake(null);
    }

    /** The same, with our max-frame-size (null: the largest there is). */
    EmbeddedConnection handshake(UnsignedInteger maxFrameSize) throws Exception {
        writeBytes(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0});
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("PLAIN"));
        init.setInitialResponse(new Binary("\0guest\0guest".getBytes()));
        write(AmqpFrame.TYPE_SASL, init, null);
        writeBytes(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0});
        Open open = new Open();
        open.setContainerId("embedded");
        open.setMaxFrameSize(maxFrameSize);
        write(AmqpFrame.TYPE_AMQP, open, null);
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(1000));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        write(AmqpFrame.TYPE_AMQP, begin, null);
        readUntil(Begin.class);
        return this;
    }

    void attachSender(int handle, String address) {
        Attach attach = new Attach();
        attach.setName("sender-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.SENDER);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        attach.setSource(new Source());
        Target target = new Target();
        target.setAddress(address);
        attach.setTarget(target);
        write(AmqpFrame.TYPE_AMQP, attach, null);
    }

    void attachReceiver(int handle, String address) {
        Attach attach = new Attach();
        attach.setName("receiver-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.RECEIVER);
        Source source = new Source();
        source.setAddress(address);
        attach.setSource(source);
        attach.setTarget(new Target());
        write(AmqpFrame.TYPE_AMQP, attach, null);
    }

    /** Grants link {@code handle} (ours receiving) {@code credit} from {@code deliveryCount}. */
    void grant(int handle, long deliveryCount, int credit) {
        Flow flow = new Flow();
        flow.setHandle(UnsignedInteger.valueOf(handle));
        flow.setNextIncomingId(UnsignedInteger.ZERO);
        flow.setIncomingWindow(UnsignedInteger.valueOf(Integer.MAX_VALUE));
        flow.setNextOutgoingId(UnsignedInteger.ZERO);
        flow.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        flow.setDeliveryCount(UnsignedInteger.valueOf(deliveryCount));
        flow.setLinkCredit(UnsignedInteger.valueOf(credit));
        write(AmqpFrame.TYPE_AMQP, flow, null);
    }

    void transfer(int handle, long deliveryId, byte[] message) {
        Transfer transfer = new Transfer();
        transfer.setHandle(UnsignedInteger.valueOf(handle));
        transfer.setDeliveryId(UnsignedInteger.valueOf(deliveryId));
        transfer.setDeliveryTag(new Binary(new byte[] {(byte) deliveryId}));
        transfer.setMessageFormat(UnsignedInteger.ZERO);
        write(AmqpFrame.TYPE_AMQP, transfer, message);
    }

    void write(int type, Object performative, byte[] payload) {
        ByteBuf buf = Unpooled.buffer();
        PerformativeCodec.writeFrame(buf, type, 0, performative, payload == null ? 0 : payload.length);
        if (payload != null) {
            buf.writeBytes(payload);
        }
        channel.writeInbound(buf);
        channel.runPendingTasks();
    }

    private void writeBytes(byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
        channel.runPendingTasks();
    }

    /** The next frame's performative the broker wrote, or null when it wrote nothing more (headers skipped). */
    Object read() throws AmqpDecodeException {
        channel.runPendingTasks();
        for (ByteBuf out; (out = channel.readOutbound()) != null; ) {
            received.writeBytes(out);
            out.release();
        }
        while (received.readableBytes() >= 8) {
            if (received.getInt(received.readerIndex()) == ('A' << 24 | 'M' << 16 | 'Q' << 8 | 'P')) {
                received.skipBytes(8);
                continue;
            }
            int size = received.getInt(received.readerIndex());
            int doff = received.getUnsignedByte(received.readerIndex() + 4);
            ByteBuf frame = received.readSlice(size);
            if (size == doff * 4) {
                continue;
            }
            int start = frame.readerIndex() + doff * 4;
            int end = TypeReader.valueEnd(frame, start, frame.writerIndex());
            return ProtonCodec.current().decode(frame, start, end);
        }
        return null;
    }

    /** Frames until one of {@code type}; fails when the broker has written everything without one. */
    <T> T readUntil(Class<T> type) throws AmqpDecodeException {
        for (Object frame; (frame = read()) != null; ) {
            if (type.isInstance(frame)) {
                return type.cast(frame);
            }
        }
        throw new AssertionError("the broker wrote no " + type.getSimpleName());
    }

    /** Everything the broker has written and not yet read, decoded. */
    java.util.List<Object> drain() throws AmqpDecodeException {
        java.util.List<Object> frames = new java.util.ArrayList<>();
        for (Object frame; (frame = read()) != null; ) {
            frames.add(frame);
        }
        return frames;
    }

    /**
     * As if the client stopped reading its socket ({@code false}: the channel turns unwritable) or started again,
     * with the writability event the broker hears then.
     */
    void socketWritable(boolean writable) {
        channel.unsafe().outboundBuffer().setUserDefinedWritability(1, writable);
        channel.runPendingTasks();
    }

    /** The broker's default virtual host. */
    io.skiffmq.core.VirtualHost vhost() {
        return broker.vhost("/");
    }

    @Override
    public void close() throws java.io.IOException {
        channel.finishAndReleaseAll();
        vhost().queues().forEach(io.skiffmq.core.queue.Queue::close);
        queues.runAll();
        received.release();
        broker.close();
        RunningBroker.delete(dataDir);
    }
}
