package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import java.util.Arrays;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.ReadableBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/** Decoding the per-message performatives: the hand-written fast path against proton-j's decoder. */
public class PerformativeBenchmark extends AbstractMicrobenchmark {
    @Param({"transfer", "flow", "disposition"})
    String performative;

    private final PerformativeCodec codec = new PerformativeCodec();
    private final DecoderImpl protonDecoder = new DecoderImpl();
    private ByteBuf buffer;
    private byte[] bytes;

    @Setup(Level.Trial)
    public void encode() {
        AMQPDefinedTypes.registerAllTypes(protonDecoder, new EncoderImpl(protonDecoder));
        Object value = switch (performative) {
            case "transfer" -> {
                Transfer t = new Transfer();
                t.setHandle(UnsignedInteger.ONE);
                t.setDeliveryId(UnsignedInteger.valueOf(100_000));
                t.setDeliveryTag(new Binary(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
                t.setMessageFormat(UnsignedInteger.ZERO);
                t.setSettled(false);
                yield t;
            }
            case "flow" -> {
                Flow f = new Flow();
                f.setNextIncomingId(UnsignedInteger.valueOf(100_000));
                f.setIncomingWindow(UnsignedInteger.valueOf(5000));
                f.setNextOutgoingId(UnsignedInteger.valueOf(7));
                f.setOutgoingWindow(UnsignedInteger.MAX_VALUE);
                f.setHandle(UnsignedInteger.ONE);
                f.setDeliveryCount(UnsignedInteger.valueOf(99_000));
                f.setLinkCredit(UnsignedInteger.valueOf(1000));
                yield f;
            }
            default -> {
                Disposition d = new Disposition();
                d.setRole(Role.RECEIVER);
                d.setFirst(UnsignedInteger.valueOf(100_000));
                d.setLast(UnsignedInteger.valueOf(100_100));
                d.setSettled(true);
                d.setState(Accepted.getInstance());
                yield d;
            }
        };
        ByteBuf encoded = Unpooled.buffer();
        ProtonCodec.current().encode(value, encoded);
        bytes = Arrays.copyOf(encoded.array(), encoded.readableBytes());
        buffer = Unpooled.wrappedBuffer(bytes);
    }

    @Benchmark
    public Object fastPath() throws AmqpDecodeException {
        // decode moves the reader index past the performative: rewind instead of allocating a duplicate
        return codec.decode(buffer.readerIndex(0));
    }

    @Benchmark
    public Object proton() {
        protonDecoder.setBuffer(ReadableBuffer.ByteBufferReader.wrap(bytes));
        return protonDecoder.readObject();
    }
}
