package io.skiffmq.core.filter;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedByte;
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
 * Selector evaluation per message, as a queue pays it for each message a selector consumer looks at: a plain
 * equality, a compound selector (IN, BETWEEN, LIKE, NOT) and JMS header fields, against an AMQP 1.0 message whose
 * application-properties ({@code properties} of them) are read in place, and against an AMQP 0-9-1 message's
 * headers; and parsing. Bytes allocated per evaluation: {@code -prof gc}. No timing is asserted anywhere.
 */
public class SelectorBenchmark extends AbstractMicrobenchmark {
    @Param({"4", "32"})
    int properties;

    private Message amqp10;
    private Message amqp091;
    private final Selector equality = Selector.parse("color = 'red'");
    private final Selector compound = Selector.parse(
        "color IN ('red', 'green') AND size BETWEEN 10 AND 100 AND NOT (code LIKE 'X%') AND weight > 1.5");
    private final Selector headerFields = Selector.parse("JMSPriority > 4 AND JMSType = 'order'");

    @Setup(Level.Trial)
    public void messages() throws Exception {
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < properties - 4; i++) {
            values.put("filler-" + i, "value-" + i);
        }
        values.put("color", "red");
        values.put("size", 42);
        values.put("code", "A-17");
        values.put("weight", 2.5d);
        Header header = new Header();
        header.setPriority(UnsignedByte.valueOf((byte) 7));
        Properties p = new Properties();
        p.setSubject("order");
        ByteBuf bytes = Unpooled.buffer();
        for (Object section : new Object[] {header, p, new ApplicationProperties(values),
                new Data(new Binary(new byte[12]))}) {
            ProtonCodec.current().encode(section, bytes);
        }
        amqp10 = Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
        ByteBuf encoded = Unpooled.buffer();
        new BasicProperties(null, null, values, 2, 7, null, null, null, null, null, "order", null, null, null)
            .encode(encoded);
        amqp091 = Amqp091Message.of(encoded, Unpooled.wrappedBuffer(new byte[12]), "", "q");
    }

    @TearDown(Level.Trial)
    public void release() {
        amqp10.release();
        amqp091.release();
    }

    @Benchmark
    public boolean equalityAmqp10() {
        return equality.matches(amqp10);
    }

    @Benchmark
    public boolean compoundAmqp10() {
        return compound.matches(amqp10);
    }

    @Benchmark
    public boolean headerFieldsAmqp10() {
        return headerFields.matches(amqp10);
    }

    @Benchmark
    public boolean compoundAmqp091() {
        return compound.matches(amqp091);
    }

    @Benchmark
    public Selector parse() {
        return Selector.parse("color IN ('red', 'green') AND size BETWEEN 10 AND 100 AND NOT (code LIKE 'X%')");
    }
}
