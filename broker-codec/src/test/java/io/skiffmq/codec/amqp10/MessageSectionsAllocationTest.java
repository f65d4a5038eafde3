package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * A message's section index is kept with every queued AMQP 1.0 message, so it holds section starts only: indexing a
 * message with every section allocates the index alone, 48 bytes (with compressed references), and asking for its
 * header fields, start, body kind or body section count allocates nothing. Measured per thread over many scans after a warm-up, on an unpooled heap buffer.
 */
class MessageSectionsAllocationTest {
    private static final int ROUNDS = 20_000;

    @Test
    void theIndexIsFortyEightBytesAndReadingTheHeaderAllocatesNothing() throws Exception {
        Message message = Message.Factory.create();
        Header header = new Header();
        header.setDurable(true);
        header.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) 7));
        header.setTtl(UnsignedInteger.valueOf(60_000));
        header.setDeliveryCount(UnsignedInteger.valueOf(3));
        message.setHeader(header);
        message.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-a"), "b")));
        Properties properties = new Properties();
        properties.setMessageId("m-1");
        message.setProperties(properties);
        message.setApplicationProperties(new ApplicationProperties(Map.of("k", "v")));
        message.setBody(new Data(new Binary(new byte[12])));
        byte[] encoded = new byte[512];
        ByteBuf bytes = Unpooled.wrappedBuffer(encoded, 0, message.encode(encoded, 0, encoded.length));

        assertThat(Allocations.perCall(ROUNDS, () -> MessageSections.scan(bytes))).isLessThanOrEqualTo(48);
        MessageSections sections = MessageSections.scan(bytes);
        long[] sum = new long[1];
        assertThat(Allocations.perCall(ROUNDS, () -> {
            sum[0] += sections.priority() + sections.ttl() + sections.deliveryCount() + (sections.durable() ? 1 : 0);
            return null;
        })).isZero();
        assertThat(sum[0]).isEqualTo(2L * ROUNDS * (7 + 60_000 + 3 + 1));
        assertThat(Allocations.perCall(ROUNDS, () -> {
            sum[0] += sections.start() + sections.bodyCode() + sections.bodySectionCount();
            return null;
        })).isZero();
        assertThat(sections.start()).isEqualTo(bytes.readerIndex());
        assertThat(sections.bodyCode()).isEqualTo(SectionCode.DATA);
        assertThat(sections.bodySectionCount()).isEqualTo(1);

        // the index keeps no message start (its first section's): one in a buffer that does not start at 0 is read
        // from the message's start, and a message without a header has none
        ByteBuf offset = Unpooled.buffer().writeZero(5).writeBytes(bytes, bytes.readerIndex(), bytes.readableBytes());
        offset.readerIndex(5);
        MessageSections shifted = MessageSections.scan(offset);
        assertThat(shifted.has(SectionCode.HEADER)).isTrue();
        assertThat(shifted.start()).isEqualTo(5);
        assertThat(shifted.end()).isEqualTo(5 + bytes.readableBytes());
        assertThat(shifted.sectionValue(SectionCode.HEADER)).isEqualTo(sections.sectionValue(SectionCode.HEADER) + 5);
        assertThat(shifted.priority()).isEqualTo(7);
        assertThat(shifted.ttl()).isEqualTo(60_000);
        assertThat(shifted.deliveryCount()).isEqualTo(3);
        assertThat(shifted.durable()).isTrue();
        message.setHeader(null);
        int length = message.encode(encoded, 0, encoded.length);
        MessageSections headless = MessageSections.scan(Unpooled.wrappedBuffer(encoded, 0, length));
        assertThat(headless.has(SectionCode.HEADER)).isFalse();
        assertThat(headless.sectionValue(SectionCode.HEADER)).isEqualTo(-1);
        assertThat(headless.durable()).isFalse();
        assertThat(headless.bodyCode()).isEqualTo(SectionCode.DATA);
        assertThat(headless.start()).as("its message annotations start it").isZero();
        assertThat(headless.sectionValue(SectionCode.AMQP_VALUE)).isEqualTo(-1);
        assertThat(headless.has(SectionCode.AMQP_VALUE)).isFalse();
        MessageSections empty = MessageSections.scan(Unpooled.buffer().writeZero(3).readerIndex(3));
        assertThat(empty.start()).as("no section").isEqualTo(3);
        assertThat(empty.bodyCode()).isEqualTo(-1);
        assertThat(empty.bodySectionCount()).isZero();
        assertThat(empty.has(SectionCode.DATA)).isFalse();
    }
}
