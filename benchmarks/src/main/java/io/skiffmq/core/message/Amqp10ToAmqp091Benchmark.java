package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.ProtonCodec;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A stream's message converted for a 0-9-1 consumer: the walk of its sections in place ({@link SectionsToAmqp091},
 * what a delivery does through {@link Amqp091Content}) against the conversion through decoded maps it replaced
 * ({@link Amqp10ToAmqp091#convertWithMaps}), alone and with the read of the message from the stored bytes
 * ({@link Amqp10Message#fromStream}). The stored message is a slice of a pooled direct buffer, as a chunk of the log's
 * mapped file is. Run with {@code -prof gc} for the bytes allocated per message.
 *
 * <ul>
 *   <li>{@code perftest}: what PerfTest publishes over 0-9-1 (persistent, 12 bytes, no property), as a stream stores
 *       it: header, the annotations {@code x-exchange} and {@code x-routing-key}, one data section;</li>
 *   <li>{@code headers}: a 0-9-1 message with content-type, message-id, timestamp, a type and four headers, stored
 *       likewise;</li>
 *   <li>{@code amqp10}: what an AMQP 1.0 client sends: header, properties (message-id, to, content-type, creation
 *       time), two application properties, one data section.</li>
 * </ul>
 */
public class Amqp10ToAmqp091Benchmark extends AbstractMicrobenchmark {
    @Param({"perftest", "headers", "amqp10"})
    String message;

    private ByteBuf stored;
    private Amqp10Message read;
    private ByteBuf out;
    private final SectionsToAmqp091 walk = new SectionsToAmqp091();
    private final Amqp091Content content = new Amqp091Content();
    private final StoredRouteNames names = new StoredRouteNames();

    @Setup(Level.Trial)
    public void store() throws Exception {
        byte[] bytes = switch (message) {
            case "perftest" -> throughStream(new BasicProperties(null, null, null, 2, null, null, null, null, null,
                null, null, null, null, null));
            case "headers" -> {
                Map<String, Object> headers = new LinkedHashMap<>();
                headers.put("colour", "red");
                headers.put("count", 5);
                headers.put("region", "eu-west");
                headers.put("x-stream-filter-value", "eu");
                yield throughStream(new BasicProperties("application/json", null, headers, 2, null, null, null,
                    null, "order-1", Instant.ofEpochSecond(1_700_000_000L), "order.created", null, null, null));
            }
            case "amqp10" -> {
                Header header = new Header();
                header.setDurable(true);
                Properties properties = new Properties();
                properties.setMessageId(UnsignedLong.valueOf(42));
                properties.setTo("/queues/orders");
                properties.setContentType(Symbol.valueOf("application/octet-stream"));
                properties.setCreationTime(new java.util.Date(1_700_000_000_000L));
                Map<String, Object> application = new LinkedHashMap<>();
                application.put("colour", "red");
                application.put("count", 5L);
                ByteBuf encoded = Unpooled.buffer();
                for (Object section : new Object[] {header, properties, new ApplicationProperties(application),
                        new Data(new Binary(new byte[12]))}) {
                    ProtonCodec.current().encode(section, encoded);
                }
                byte[] b = ByteBufUtil.getBytes(encoded);
                encoded.release();
                yield b;
            }
            default -> throw new IllegalArgumentException(message);
        };
        stored = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length + 64).writeZero(64).writeBytes(bytes)
            .slice(64, bytes.length);
        read = Amqp10Message.fromStream(stored.retainedSlice(), 1_000_000, "stream");
        out = PooledByteBufAllocator.DEFAULT.directBuffer(1024);
        if (!walk.write(read, out)) {
            throw new IllegalStateException("the walk declines " + message);
        }
    }

    /** What a stream stores for a 0-9-1 message: its conversion at publish, copied. */
    private static byte[] throughStream(BasicProperties properties) throws Exception {
        ByteBuf encoded = Unpooled.buffer();
        properties.encode(encoded);
        Amqp091Message published = Amqp091Message.of(encoded, Unpooled.wrappedBuffer(new byte[12]), "", "stream");
        try {
            return ByteBufUtil.getBytes(published.toAmqp10().bytes());
        } finally {
            published.release();
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        read.release();
        stored.unwrap().release();
        out.release();
    }

    @Benchmark
    public int walk() {
        out.clear();
        walk.write(read, out);
        return out.writerIndex();
    }

    @Benchmark
    public int maps() {
        Amqp091Message converted = Amqp10ToAmqp091.convertWithMaps(read);
        int length = converted.propertyBytes().readableBytes();
        converted.release();
        return length;
    }

    /**
     * A stream delivery's conversion now: the message read from its stored bytes (its names as the consumer's reader
     * keeps them), its properties walked.
     */
    @Benchmark
    public int readThenWalk() throws MalformedMessageException {
        Amqp10Message m = Amqp10Message.fromStream(stored.retainedSlice(), 1_000_000, "stream", names);
        out.clear();
        content.writeProperties(m, out);
        int length = content.bodyLength();
        content.clear();
        m.release();
        return out.writerIndex() + length;
    }

    /** The same before: the message read (its names decoded), converted through the maps. */
    @Benchmark
    public int readThenMaps() throws MalformedMessageException {
        Amqp10Message m = Amqp10Message.fromStream(stored.retainedSlice(), 1_000_000, "stream");
        Amqp091Message converted = Amqp10ToAmqp091.convertWithMaps(m);
        int length = converted.propertyBytes().readableBytes() + converted.body().readableBytes();
        converted.release();
        m.release();
        return length;
    }
}
