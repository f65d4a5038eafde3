package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import java.util.Arrays;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.ReadableBuffer;
import org.apache.qpid.proton.codec.WritableBuffer;
import org.apache.qpid.proton.message.Message;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * The broker's per-message work on the wire, 12-byte body: decode an incoming transfer frame body (performative
 * and message), then emit the delivery to a consumer (frame header, transfer, fresh header, merged annotations,
 * the bare message) into a reused buffer. Beside it, the same through proton-j objects: decode the transfer and
 * the message, set the header and annotations, encode both.
 */
public class TransferBenchmark extends AbstractMicrobenchmark {
    private ByteBuf frameBody;
    private byte[] frameBytes;
    private final PerformativeCodec codec = new PerformativeCodec();
    private final BrokerAnnotations annotations = new BrokerAnnotations();
    private final ByteBuf tag = Unpooled.wrappedBuffer(new byte[8]);
    private final ByteBuf out = Unpooled.directBuffer(4096);
    private long deliveryId;

    private final DecoderImpl protonDecoder = new DecoderImpl();
    private final EncoderImpl protonEncoder = new EncoderImpl(protonDecoder);
    private final java.nio.ByteBuffer protonOut = java.nio.ByteBuffer.allocate(4096);

    @Setup(Level.Trial)
    public void encode() {
        AMQPDefinedTypes.registerAllTypes(protonDecoder, protonEncoder);
        Message message = Message.Factory.create();
        message.setHeader(new Header());
        message.getHeader().setDurable(true);
        Properties properties = new Properties();
        properties.setMessageId("m-1");
        properties.setTo("/queues/q1");
        message.setProperties(properties);
        message.setApplicationProperties(new ApplicationProperties(Map.of("k", "v")));
        message.setBody(new Data(new Binary(new byte[12])));
        byte[] encoded = new byte[1024];
        int length = message.encode(encoded, 0, encoded.length);

        Transfer transfer = new Transfer();
        transfer.setHandle(UnsignedInteger.ONE);
        transfer.setDeliveryId(UnsignedInteger.valueOf(42));
        transfer.setDeliveryTag(new Binary(new byte[] {0, 0, 0, 42}));
        transfer.setMessageFormat(UnsignedInteger.ZERO);
        ByteBuf body = Unpooled.buffer();
        ProtonCodec.current().encode(transfer, body);
        body.writeBytes(encoded, 0, length);
        frameBytes = Arrays.copyOf(body.array(), body.readableBytes());
        frameBody = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(frameBytes.length).writeBytes(frameBytes);
        annotations.put("x-exchange", "").put("x-routing-key", "q1");
    }

    @Benchmark
    public ByteBuf decodeAndReEmit() throws AmqpDecodeException {
        ByteBuf body = frameBody.readerIndex(0);
        TransferPerformative in = (TransferPerformative) codec.decode(body);
        long handle = in.handle();
        MessageSections message = MessageSections.scan(body);

        out.clear();
        TransferPerformative delivery = codec.transfer().handle(handle).deliveryId(deliveryId++)
            .deliveryTag(tag, 0, 8).messageFormat(0).settled(false);
        int headerStart = out.writerIndex();
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, delivery, 0);
        DeliveryEncoder.writeAnnotations(out, message, message.durable(), message.priority(), message.ttl(), false, 0,
            annotations);
        int bare = message.bareMessageStart();
        out.writeBytes(body, bare, message.end() - bare);
        out.setInt(headerStart, out.writerIndex() - headerStart);
        return out;
    }

    @Benchmark
    public java.nio.ByteBuffer protonDecodeAndReEncode() {
        protonDecoder.setBuffer(ReadableBuffer.ByteBufferReader.wrap(frameBytes));
        Transfer in = (Transfer) protonDecoder.readObject();
        Message message = Message.Factory.create();
        int performativeLength = protonDecoder.getBuffer().position();
        message.decode(frameBytes, performativeLength, frameBytes.length - performativeLength);

        Transfer delivery = new Transfer();
        delivery.setHandle(in.getHandle());
        delivery.setDeliveryId(UnsignedInteger.valueOf(deliveryId++ & 0xffffffffL));
        delivery.setDeliveryTag(new Binary(new byte[8]));
        delivery.setMessageFormat(UnsignedInteger.ZERO);
        delivery.setSettled(false);
        message.getHeader().setDeliveryCount(UnsignedInteger.ZERO);
        message.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-exchange"), "",
            Symbol.valueOf("x-routing-key"), "q1")));
        protonOut.clear();
        protonOut.position(8);
        protonEncoder.setByteBuffer(WritableBuffer.ByteBufferWrapper.wrap(protonOut));
        protonEncoder.writeObject(delivery);
        message.encode(new WritableBuffer.ByteBufferWrapper(protonOut));
        return protonOut;
    }
}
