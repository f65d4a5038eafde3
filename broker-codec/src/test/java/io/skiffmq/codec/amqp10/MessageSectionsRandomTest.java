package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.RandomMessages;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.qpid.proton.amqp.messaging.Section;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Properties of the section index and re-emission over seeded random messages (random encodings too). */
class MessageSectionsRandomTest {

    static LongStream seeds() {
        return LongStream.range(0, 400);
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void sectionIndexTilesTheMessageExactly(long seed) throws AmqpDecodeException {
        RandomMessages.Generated g = new RandomMessages(seed).next();
        ByteBuf buf = Unpooled.wrappedBuffer(g.bytes);
        MessageSections sections = MessageSections.scan(buf);

        List<MessageSections.Section> found = sections.sections();
        assertThat(found).hasSameSizeAs(g.sections);
        int expectedOffset = 0;
        for (int i = 0; i < found.size(); i++) {
            MessageSections.Section s = found.get(i);
            assertThat(s.offset()).as("section %d starts where the previous ended", i).isEqualTo(expectedOffset);
            assertThat(new int[] {s.code(), s.offset(), s.endOffset()}).isEqualTo(g.sections.get(i));
            expectedOffset = s.endOffset();
        }
        assertThat(expectedOffset).as("last section ends at the end").isEqualTo(g.bytes.length);
        assertThat(sections.bareMessageStart()).isEqualTo(g.bareStart);
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void lazyAccessorsReturnWhatWasEncoded(long seed) throws AmqpDecodeException {
        RandomMessages.Generated g = new RandomMessages(seed).next();
        MessageSections m = MessageSections.scan(Unpooled.wrappedBuffer(g.bytes));

        assertThat(m.durable()).isEqualTo(g.durable);
        assertThat(m.priority()).isEqualTo(g.priority);
        assertThat(m.ttl()).isEqualTo(g.ttl);
        long basics = m.headerBasics();
        assertThat(MessageSections.durable(basics)).isEqualTo(g.durable);
        assertThat(MessageSections.priority(basics)).isEqualTo(g.priority);
        assertThat(MessageSections.ttl(basics)).isEqualTo(g.ttl);
        assertThat(m.firstAcquirer()).isEqualTo(g.firstAcquirer);
        assertThat(m.deliveryCount()).isEqualTo(g.deliveryCount);
        assertThat(m.to()).isEqualTo(g.to);
        assertThat(m.subject()).isEqualTo(g.subject);
        assertThat(m.messageId()).isEqualTo(g.messageId);
        assertThat(m.applicationProperties()).containsExactlyEntriesOf(g.applicationProperties);
        for (var e : g.applicationProperties.entrySet()) {
            assertThat(m.applicationProperty(e.getKey())).isEqualTo(e.getValue());
        }
        assertThat(m.applicationProperty("absent")).isNull();
        for (var e : g.messageAnnotations.entrySet()) {
            assertThat(m.messageAnnotation(e.getKey())).isEqualTo(e.getValue());
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void reEmissionKeepsTheBareMessageBytesAndProtonAgrees(long seed) throws AmqpDecodeException {
        RandomMessages.Generated g = new RandomMessages(seed).next();
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(g.bytes.length).writeBytes(g.bytes);
        try {
            MessageSections m = MessageSections.scan(in);
            BrokerAnnotations added = new BrokerAnnotations().put("x-exchange", "amq.topic").put("x-routing-key", "a.b");
            ByteBuf delivered = DeliveryEncoder.encode(PooledByteBufAllocator.DEFAULT, m, true, 7, -1, false, 3, added);
            try {
                byte[] out = ByteBufUtil.getBytes(delivered);
                byte[] bare = Arrays.copyOfRange(g.bytes, g.bareStart, g.bytes.length);
                assertThat(Arrays.copyOfRange(out, out.length - bare.length, out.length))
                    .as("bare message and footer byte for byte").isEqualTo(bare);

                MessageSections again = MessageSections.scan(delivered);
                assertThat(again.has(SectionCode.DELIVERY_ANNOTATIONS)).isFalse();
                assertThat(again.durable()).isTrue();
                assertThat(again.priority()).isEqualTo(7);
                assertThat(again.deliveryCount()).isEqualTo(3);
                assertThat(again.messageAnnotation("x-exchange")).isEqualTo("amq.topic");
                for (var e : g.messageAnnotations.entrySet()) {
                    assertThat(again.messageAnnotation(e.getKey())).isEqualTo(e.getValue());
                }
                if (m.bodySectionCount() <= 1) {
                    Message proton = Message.Factory.create();
                    proton.decode(out, 0, out.length);
                    assertThat(proton.getAddress()).isEqualTo(g.to);
                    assertThat(proton.getSubject()).isEqualTo(g.subject);
                    assertThat(proton.isDurable()).isTrue();
                    assertThat(proton.getDeliveryCount()).isEqualTo(3);
                    assertThat(proton.getMessageAnnotations().getValue())
                        .containsEntry(org.apache.qpid.proton.amqp.Symbol.valueOf("x-routing-key"), "a.b");
                    Section body = proton.getBody();
                    assertThat(body == null).isEqualTo(m.bodyCode() < 0);
                }
            } finally {
                delivered.release();
            }
        } finally {
            in.release();
        }
    }

    @org.junit.jupiter.api.Test
    void theHeadersBasicsAtTheirLimitsAndInAMessageWithoutAHeader() throws AmqpDecodeException {
        byte[] limits = {0x00, 0x53, 0x70, (byte) 0xc0, 9, 3, 0x41, 0x50, (byte) 0xff, 0x70, (byte) 0xff, (byte) 0xff,
            (byte) 0xff, (byte) 0xff, 0x00, 0x53, 0x77, 0x40}; // durable, priority 255, ttl 2^32-1; a null value
        long basics = MessageSections.scan(Unpooled.wrappedBuffer(limits)).headerBasics();
        assertThat(MessageSections.durable(basics)).isTrue();
        assertThat(MessageSections.priority(basics)).isEqualTo(255);
        assertThat(MessageSections.ttl(basics)).isEqualTo(0xffffffffL);

        long none = MessageSections.scan(Unpooled.wrappedBuffer(new byte[] {0x00, 0x53, 0x77, 0x40})).headerBasics();
        assertThat(MessageSections.durable(none)).isFalse();
        assertThat(MessageSections.priority(none)).isEqualTo(4);
        assertThat(MessageSections.ttl(none)).isEqualTo(-1);
    }
}
