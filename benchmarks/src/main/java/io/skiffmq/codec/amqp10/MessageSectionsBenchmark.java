package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.message.Message;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What routing needs from a message: {@code to} and one application property. The section index plus two lazy
 * reads, against proton-j decoding the whole message, for bodies of 12 B, 1 KiB and 64 KiB with 10
 * application properties. Our side reads a slice of a pooled direct buffer, as the broker does; proton-j reads the
 * byte array it needs. Run with {@code -prof gc} for bytes allocated per op.
 */
public class MessageSectionsBenchmark extends AbstractMicrobenchmark {
    @Param({"12", "1024", "65536"})
    int bodySize;

    private ByteBuf buffer;
    private byte[] bytes;
    private MessageSections scanned;

    @Setup(Level.Trial)
    public void encode() {
        Message message = Message.Factory.create();
        Properties properties = new Properties();
        properties.setMessageId("message-1");
        properties.setTo("/exchanges/amq.topic/orders.eu.created");
        properties.setSubject("order-created");
        properties.setContentType(org.apache.qpid.proton.amqp.Symbol.valueOf("application/octet-stream"));
        message.setProperties(properties);
        Map<String, Object> applicationProperties = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            applicationProperties.put("key-" + i, i % 2 == 0 ? "value-" + i : (Object) (long) i);
        }
        message.setApplicationProperties(new ApplicationProperties(applicationProperties));
        message.setBody(new Data(new Binary(new byte[bodySize])));
        byte[] out = new byte[bodySize + 1024];
        bytes = Arrays.copyOf(out, message.encode(out, 0, out.length));
        // as the broker holds a message: a slice of a pooled direct buffer read from the socket
        buffer = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length + 64).writeZero(64).writeBytes(bytes)
            .slice(64, bytes.length);
        try {
            scanned = MessageSections.scan(buffer);
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException(e);
        }
    }

    @Benchmark
    public void sectionIndexThenToAndOneProperty(Blackhole bh) throws AmqpDecodeException {
        // scan never moves the buffer's indexes, so the same slice serves every op
        MessageSections sections = MessageSections.scan(buffer);
        bh.consume(sections.to());
        bh.consume(sections.applicationProperty("key-7"));
    }

    @Benchmark
    public MessageSections sectionIndexOnly() throws AmqpDecodeException {
        return MessageSections.scan(buffer);
    }

    @Benchmark
    public Object applicationPropertyOnly(Blackhole bh) throws AmqpDecodeException {
        return scanned.applicationProperty("key-7");
    }

    @Benchmark
    public void protonFullDecode(Blackhole bh) {
        Message message = Message.Factory.create();
        message.decode(bytes, 0, bytes.length);
        bh.consume(message.getAddress());
        bh.consume(message.getApplicationProperties().getValue().get("key-7"));
    }
}
