package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp091.Amqp091FrameWriter;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp091.ChannelMethod;
import io.skiffmq.codec.amqp091.ConfirmMethod;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.MethodCodec;
import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;
import io.skiffmq.server.Broker;
import io.skiffmq.server.InProcessBroker;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.transport.ByteCounter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The broker's in-process AMQP 0-9-1 path for one message, no sockets: publish (confirm mode), route, queue, deliver,
 * ack, confirm. As {@code server.amqp10.DeliveryPathBenchmark}: two {@link EmbeddedChannel}s with the listener's
 * pipeline ({@link ByteCounter} + {@link Amqp091FrameDecoder} + {@link Amqp091ConnectionHandler}), a publisher
 * channel in confirm mode publishing to the transient queue {@code q} through the default exchange, a consumer with
 * manual acks and no prefetch limit; the broker is an {@link InProcessBroker}, everything on its one thread.
 *
 * <p>One op is one message; each invocation moves {@link #BATCHES} batches of {@link #BATCH}: the publisher's
 * {@code basic.publish}, content header (12-byte body, transient) and body frames in one buffer, the consumer's
 * deliveries read and counted, one {@code basic.ack multiple} for the batch written back, and the publisher's
 * confirms read and counted. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the broker's bytes per
 * message (the client side here allocates per batch only).
 */
@OperationsPerInvocation(Amqp091DeliveryPathBenchmark.BATCH * Amqp091DeliveryPathBenchmark.BATCHES)
public class Amqp091DeliveryPathBenchmark extends AbstractMicrobenchmark {
    static final int BATCH = 100;
    static final int BATCHES = 10;

    private final InProcessBroker inProcess = new InProcessBroker();
    private Broker broker;
    private EmbeddedChannel publisher;
    private EmbeddedChannel consumer;
    /** {@link #BATCH} messages of three frames each. */
    private byte[] frames;
    private long nextDeliveryTag = 1;
    private long nextConfirm = 1;
    private final ByteBuf received = Unpooled.buffer(64 * 1024);
    @Setup(Level.Trial)
    public void start() throws Exception {
        inProcess.run(() -> {
            setUp();
            return null;
        });
    }

    private void setUp() throws Exception {
        broker = inProcess.start("skiffmq-deliverypath091");
        DirectReplyTo directReplyTo = new DirectReplyTo();
        publisher = connect(inProcess.config(), inProcess.sasl(), directReplyTo);
        consumer = connect(inProcess.config(), inProcess.sasl(), directReplyTo);
        write(publisher, new ConfirmMethod.Select(false));
        write(consumer, new BasicMethod.Consume("q", "c", false, false, false, false, Map.of()));
        drain(publisher);
        drain(consumer);
        encodeFrames();
    }

    /**
     * A connection through PLAIN as guest (as after the listener's protocol detection), tuned to the server's limits,
     * with channel 1 open.
     */
    private EmbeddedChannel connect(BrokerConfig config, SaslAuthenticator sasl, DirectReplyTo directReplyTo) {
        ConnectionCounters counters = new ConnectionCounters(BrokerCounters.AMQP091);
        EmbeddedChannel channel = new EmbeddedChannel(new ByteCounter(counters, broker.resourceMonitor()),
            new Amqp091FrameDecoder(config.amqp091InitialFrameMax()),
            new Amqp091ConnectionHandler(broker, sasl, directReplyTo, counters));
        channel.runPendingTasks(); // connection.start: the listener's detector has read the protocol header
        write(channel, 0, new ConnectionMethod.StartOk(Map.of(), "PLAIN",
            Bytes.wrap("\0guest\0guest".getBytes(StandardCharsets.US_ASCII)), "en_US"));
        ConnectionMethod.Tune tune = tune(channel);
        write(channel, 0, new ConnectionMethod.TuneOk(tune.channelMax(), tune.frameMax(), 0));
        write(channel, 0, new ConnectionMethod.Open("/"));
        write(channel, 1, new ChannelMethod.Open());
        return channel;
    }

    /** The server's {@code connection.tune}, from what it wrote so far. */
    private static ConnectionMethod.Tune tune(EmbeddedChannel channel) {
        for (Object out; (out = channel.readOutbound()) != null; ) {
            ByteBuf buf = (ByteBuf) out;
            try {
                while (buf.readableBytes() >= 8) {
                    int size = buf.getInt(buf.readerIndex() + 3);
                    ByteBuf payload = buf.slice(buf.readerIndex() + 7, size);
                    if (buf.getByte(buf.readerIndex()) == Amqp091Frame.TYPE_METHOD
                            && MethodCodec.decode(payload) instanceof ConnectionMethod.Tune tune) {
                        return tune;
                    }
                    buf.skipBytes(7 + size + 1);
                }
            } catch (Amqp091DecodeException e) {
                throw new IllegalStateException(e);
            } finally {
                buf.release();
            }
        }
        throw new IllegalStateException("no connection.tune from the broker");
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
    public long publishDeliverAck() throws Exception {
        inProcess.run(batch);
        return nextConfirm;
    }

    private final Callable<Void> batch = () -> {
        for (int i = 0; i < BATCHES; i++) {
            runBatch();
        }
        return null;
    };

    private void runBatch() throws Exception {
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(frames.length);
        in.writeBytes(frames);
        publisher.writeInbound(in);
        publisher.runPendingTasks();
        consumer.runPendingTasks();

        long lastTag = lastDeliveryTag(consumer);
        if (lastTag != nextDeliveryTag + BATCH - 1) {
            throw new IllegalStateException("the consumer's last delivery tag is " + lastTag + ", not "
                + (nextDeliveryTag + BATCH - 1));
        }
        nextDeliveryTag += BATCH;
        write(consumer, new BasicMethod.Ack(lastTag, true));
        publisher.runPendingTasks();

        long confirmed = lastConfirm(publisher);
        if (confirmed != nextConfirm + BATCH - 1) {
            throw new IllegalStateException("the publisher's last confirm is " + confirmed + ", not "
                + (nextConfirm + BATCH - 1));
        }
        nextConfirm += BATCH;
    }

    private void encodeFrames() {
        ByteBuf out = Unpooled.buffer();
        Method publish = new BasicMethod.Publish("", "q", false, false);
        BasicProperties properties = new BasicProperties(null, null, null, 1, null, null, null, null, null, null,
            null, null, null, null);
        ByteBuf body = Unpooled.wrappedBuffer(new byte[12]);
        for (int i = 0; i < BATCH; i++) {
            Amqp091FrameWriter.writeMethod(out, 1, publish);
            Amqp091FrameWriter.writeContentHeader(out, 1, BasicMethod.CLASS_ID, 12, properties);
            Amqp091FrameWriter.writeBody(out, 1, body, 131072);
        }
        frames = new byte[out.readableBytes()];
        out.readBytes(frames);
    }

    /** The delivery tag of the last {@code basic.deliver} the broker wrote on {@code channel}, 0 for none. */
    private long lastDeliveryTag(EmbeddedChannel channel) {
        // the tag follows the consumer tag
        return lastLong(channel, BasicMethod.Deliver.METHOD_ID, at -> at + 1 + received.getUnsignedByte(at));
    }

    /** The highest delivery tag the broker's {@code basic.ack}s on {@code channel} confirmed, 0 for none. */
    private long lastConfirm(EmbeddedChannel channel) {
        return lastLong(channel, BasicMethod.Ack.METHOD_ID, at -> at);
    }

    /**
     * Reads what the broker wrote on {@code channel}: the largest of the longs found, in each {@code basic} method
     * frame of {@code methodId}, at {@code longAt} of where its arguments start; 0 when there is none.
     */
    private long lastLong(EmbeddedChannel channel, int methodId, java.util.function.IntUnaryOperator longAt) {
        received.clear();
        for (Object out; (out = channel.readOutbound()) != null; ) {
            ByteBuf buf = (ByteBuf) out;
            received.writeBytes(buf);
            buf.release();
        }
        long last = 0;
        while (received.readableBytes() >= 8) {
            int start = received.readerIndex();
            int size = received.getInt(start + 3);
            if (received.getByte(start) == Amqp091Frame.TYPE_METHOD
                    && received.getShort(start + 7) == BasicMethod.CLASS_ID
                    && received.getShort(start + 9) == methodId) {
                last = Math.max(last, received.getLong(longAt.applyAsInt(start + 11)));
            }
            received.skipBytes(7 + size + 1);
        }
        return last;
    }

    private static void write(EmbeddedChannel channel, Method method) {
        write(channel, 1, method);
    }

    private static void write(EmbeddedChannel channel, int number, Method method) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer();
        Amqp091FrameWriter.writeMethod(buf, number, method);
        channel.writeInbound(buf);
        channel.runPendingTasks();
        if (!channel.isOpen()) {
            throw new IllegalStateException("the broker closed the connection after " + method.name() + ": "
                + decodeAll(channel));
        }
    }

    private static String decodeAll(EmbeddedChannel channel) {
        StringBuilder methods = new StringBuilder();
        for (Object out; (out = channel.readOutbound()) != null; ) {
            ByteBuf buf = (ByteBuf) out;
            while (buf.readableBytes() >= 8) {
                int size = buf.getInt(buf.readerIndex() + 3);
                if (buf.getByte(buf.readerIndex()) == Amqp091Frame.TYPE_METHOD) {
                    try {
                        methods.append(MethodCodec.decode(buf.slice(buf.readerIndex() + 7, size))).append(' ');
                    } catch (Amqp091DecodeException e) {
                        methods.append(e).append(' ');
                    }
                }
                buf.skipBytes(7 + size + 1);
            }
            buf.release();
        }
        return methods.toString();
    }

    private static void drain(EmbeddedChannel channel) {
        for (Object out; (out = channel.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(out);
        }
    }
}
