package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.Broker;
import io.skiffmq.server.InProcessBroker;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.config.BrokerConfig;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.message.Message;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The broker's in-process AMQP 1.0 path for one message, no sockets: publish, route, queue, deliver, settle.
 * Two {@link EmbeddedChannel}s carry the real pipeline ({@link Amqp10FrameDecoder} + {@link Amqp10ConnectionHandler}):
 * a publisher with a sender link to the transient queue {@code q}, a consumer with a receiver link from it
 * (unsettled, credit topped up well ahead). The broker is an {@link InProcessBroker}: the queue runs on
 * {@link QueueExecutor#CALLER_THREAD}, so everything happens on its one thread, in order.
 *
 * <p>One op is one message; each invocation moves {@link #BATCHES} batches of {@link #BATCH}: the publisher's
 * transfer frames (12-byte body, unsettled) are written in one buffer, the consumer's transfers read and released,
 * one accepted disposition for the batch's range written back, and the publisher's dispositions read. Both sides
 * check the counts (a transfer frame per message, every delivery accepted back to the publisher). Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes the broker allocates per message (the client side here
 * allocates per batch only).
 *
 * <p>Transient only: a durable queue's confirms come from the journal's thread, and an embedded channel's event loop
 * takes tasks from its own thread only.
 */
@OperationsPerInvocation(DeliveryPathBenchmark.BATCH * DeliveryPathBenchmark.BATCHES)
public class DeliveryPathBenchmark extends AbstractMicrobenchmark {
    /** Messages per batch: at most half the publisher's credit (1000), so its top-ups keep it going. */
    static final int BATCH = 100;
    /** Batches per invocation: the hop to the broker's thread and back is paid once per {@code BATCHES * BATCH}. */
    static final int BATCHES = 10;

    private final InProcessBroker inProcess = new InProcessBroker();
    private Broker broker;
    private EmbeddedChannel publisher;
    private EmbeddedChannel consumer;
    /** {@link #BATCH} transfer frames, delivery-ids patched in before each batch. */
    private byte[] frames;
    private int[] deliveryIdOffsets;
    private long nextPublishId;
    private long nextConsumerId;
    private long consumerCredit;
    private final ByteBuf received = Unpooled.buffer(64 * 1024);
    private final DispositionPerformative disposition = new DispositionPerformative();
    private final FlowPerformative flow = new FlowPerformative();
    private final PerformativeCodec codec = new PerformativeCodec();

    @Setup(Level.Trial)
    public void start() throws Exception {
        inProcess.run(() -> {
            setUp();
            return null;
        });
    }

    private void setUp() throws Exception {
        broker = inProcess.start("skiffmq-deliverypath");
        publisher = connect(inProcess.config(), inProcess.sasl());
        consumer = connect(inProcess.config(), inProcess.sasl());

        attach(publisher, Role.SENDER, "/queues/q");
        attach(consumer, Role.RECEIVER, "/queues/q");
        consumerCredit = 1 << 30;
        grantConsumerCredit();
        drain(publisher);
        drain(consumer);
        encodeFrames();
    }

    /** A connection through SASL PLAIN as guest, open and begin on channel 0 (our incoming window: the largest). */
    private EmbeddedChannel connect(BrokerConfig config, SaslAuthenticator sasl) {
        // as the listener builds it: the byte counter first, counting into the connection's counters
        io.skiffmq.core.metrics.ConnectionCounters counters =
            new io.skiffmq.core.metrics.ConnectionCounters(io.skiffmq.core.metrics.BrokerCounters.AMQP10);
        EmbeddedChannel channel = new EmbeddedChannel(
            new io.skiffmq.server.transport.ByteCounter(counters, broker.resourceMonitor()),
            new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.SASL), config.initialMaxFrameSize()),
            new Amqp10ConnectionHandler(broker, sasl, counters));
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}));
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("PLAIN"));
        init.setInitialResponse(new Binary("\0guest\0guest".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        ByteBuf saslFrame = Unpooled.buffer();
        PerformativeCodec.writeFrame(saslFrame, AmqpFrame.TYPE_SASL, 0, init, 0);
        channel.writeInbound(saslFrame);
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0}));
        Open open = new Open();
        open.setContainerId("bench");
        write(channel, open);
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.MAX_VALUE);
        begin.setOutgoingWindow(UnsignedInteger.MAX_VALUE);
        write(channel, begin);
        return channel;
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        inProcess.run(() -> {
            inProcess.stop(() -> {
                publisher.finishAndReleaseAll();
                consumer.finishAndReleaseAll();
                received.release();
            });
            return null;
        });
        inProcess.shutdown();
    }

    @Benchmark
    public long publishDeliverSettle() throws Exception {
        inProcess.run(batch);
        return nextPublishId;
    }

    private final Callable<Void> batch = () -> {
        for (int i = 0; i < BATCHES; i++) {
            runBatch();
        }
        return null;
    };

    private void runBatch() throws Exception {
        // the publisher's batch, delivery-ids in sequence
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(frames.length);
        in.writeBytes(frames);
        for (int i = 0; i < BATCH; i++) {
            in.setInt(deliveryIdOffsets[i], (int) (nextPublishId + i));
        }
        publisher.writeInbound(in);
        publisher.runPendingTasks();
        consumer.runPendingTasks();

        int delivered = count(consumer, PerformativeCode.TRANSFER);
        if (delivered != BATCH) {
            throw new IllegalStateException("the consumer got " + delivered + " transfers, not " + BATCH);
        }
        disposition.reset();
        disposition.receiverRole(true).first(nextConsumerId).last(nextConsumerId + BATCH - 1).settled(true)
            .state(Accepted.getInstance());
        nextConsumerId += BATCH;
        write(consumer, disposition);
        consumerCredit -= BATCH;
        if (consumerCredit < 1 << 29) {
            consumerCredit = 1 << 30;
            grantConsumerCredit();
        }
        publisher.runPendingTasks();

        int settled = acceptedByBroker();
        if (settled != BATCH) {
            throw new IllegalStateException("the publisher had " + settled + " deliveries accepted, not " + BATCH);
        }
        nextPublishId += BATCH;
    }

    /** Builds {@link #BATCH} frames of one unsettled 12-byte message each and notes where each delivery-id sits. */
    private void encodeFrames() {
        Message message = Message.Factory.create();
        Properties properties = new Properties();
        properties.setMessageId("m-1");
        message.setProperties(properties);
        message.setBody(new Data(new Binary(new byte[12])));
        byte[] encoded = new byte[256];
        int length = message.encode(encoded, 0, encoded.length);

        ByteBuf out = Unpooled.buffer();
        deliveryIdOffsets = new int[BATCH];
        TransferPerformative transfer = codec.transfer();
        ByteBuf tag = Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4});
        for (int i = 0; i < BATCH; i++) {
            int start = out.writerIndex();
            transfer.reset();
            // 0x7fffffff: encoded as a full uint, 4 bytes to patch; one tag for all (the broker does not read it)
            transfer.handle(0).deliveryId(0x7fffffff).deliveryTag(tag, 0, 4).messageFormat(0).settled(false);
            PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, transfer, length);
            out.writeBytes(encoded, 0, length);
            deliveryIdOffsets[i] = find(out, start, 0x7fffffff);
        }
        frames = new byte[out.readableBytes()];
        out.readBytes(frames);
    }

    private static int find(ByteBuf out, int from, int value) {
        for (int i = from; i + 4 <= out.writerIndex(); i++) {
            if (out.getInt(i) == value) {
                return i;
            }
        }
        throw new IllegalStateException("delivery-id not found in the encoded transfer");
    }

    /** Counts, and drops, the frames the broker wrote on {@code channel} whose performative is {@code code}. */
    private int count(EmbeddedChannel channel, long code) throws Exception {
        received.clear();
        for (ByteBuf out; (out = channel.readOutbound()) != null; ) {
            received.writeBytes(out);
            out.release();
        }
        int found = 0;
        while (received.readableBytes() >= 8) {
            int start = received.readerIndex();
            int size = received.getInt(start);
            int doff = received.getUnsignedByte(start + 4);
            // a described list: 0x00, smallulong 0x53 code
            if (size > doff * 4 && received.getUnsignedByte(start + doff * 4 + 2) == code) {
                found++;
            }
            received.skipBytes(size);
        }
        return found;
    }

    /** How many of the publisher's deliveries the broker's dispositions accepted. */
    private int acceptedByBroker() throws Exception {
        received.clear();
        for (ByteBuf out; (out = publisher.readOutbound()) != null; ) {
            received.writeBytes(out);
            out.release();
        }
        int accepted = 0;
        while (received.readableBytes() >= 8) {
            int start = received.readerIndex();
            int size = received.getInt(start);
            int doff = received.getUnsignedByte(start + 4);
            ByteBuf body = received.slice(start + doff * 4, size - doff * 4);
            if (body.isReadable() && codec.decode(body) instanceof DispositionPerformative d
                    && d.stateCode() == PerformativeCode.ACCEPTED) {
                accepted += (int) ((d.last() < 0 ? d.first() : d.last()) - d.first() + 1);
            }
            received.skipBytes(size);
        }
        return accepted;
    }

    private void grantConsumerCredit() {
        flow.reset();
        flow.nextIncomingId(nextConsumerId).incomingWindow(0xffffffffL).nextOutgoingId(0).outgoingWindow(0xffffffffL)
            .handle(0).deliveryCount(nextConsumerId).linkCredit(consumerCredit);
        write(consumer, flow);
    }

    private static void attach(EmbeddedChannel channel, Role role, String address) {
        Attach attach = new Attach();
        attach.setName(role + "-link");
        attach.setHandle(UnsignedInteger.ZERO);
        attach.setRole(role);
        Source source = new Source();
        Target target = new Target();
        if (role == Role.SENDER) {
            attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
            target.setAddress(address);
        } else {
            source.setAddress(address);
        }
        attach.setSource(source);
        attach.setTarget(target);
        write(channel, attach);
    }

    private static void write(EmbeddedChannel channel, Object performative) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer();
        PerformativeCodec.writeFrame(buf, AmqpFrame.TYPE_AMQP, 0, performative, 0);
        channel.writeInbound(buf);
        channel.runPendingTasks();
    }

    private static void drain(EmbeddedChannel channel) {
        for (Object out; (out = channel.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(out);
        }
    }
}
