package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.testing.Amqp.bool1;
import static io.skiffmq.codec.testing.Amqp.bool2;
import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.described;
import static io.skiffmq.codec.testing.Amqp.describedLong;
import static io.skiffmq.codec.testing.Amqp.describedSymbol;
import static io.skiffmq.codec.testing.Amqp.hex;
import static io.skiffmq.codec.testing.Amqp.list0;
import static io.skiffmq.codec.testing.Amqp.list32;
import static io.skiffmq.codec.testing.Amqp.list8;
import static io.skiffmq.codec.testing.Amqp.map32;
import static io.skiffmq.codec.testing.Amqp.map8;
import static io.skiffmq.codec.testing.Amqp.nul;
import static io.skiffmq.codec.testing.Amqp.str8;
import static io.skiffmq.codec.testing.Amqp.sym32;
import static io.skiffmq.codec.testing.Amqp.sym8;
import static io.skiffmq.codec.testing.Amqp.uint32;
import static io.skiffmq.codec.testing.Amqp.vbin32;
import static io.skiffmq.codec.testing.Amqp.vbin8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * Re-emission against hand-built bytes, asserting the exact output: each encoding a re-encoder would be tempted
 * to normalise must come out as it went in [3.2: "The exact encoding of sections of the bare message MUST NOT
 * be modified"].
 */
class ExactBytesTest {
    private static final byte[] BODY = vbin8("hello world!".getBytes(StandardCharsets.US_ASCII));
    private static final byte[] DATA = described(0x75, BODY);

    /** Delivers {@code message} with the given fresh header and added annotations; returns the bytes. */
    private static byte[] deliver(byte[] message, boolean durable, long deliveryCount, BrokerAnnotations added)
            throws AmqpDecodeException {
        MessageSections m = MessageSections.scan(Unpooled.wrappedBuffer(message));
        ByteBuf out = DeliveryEncoder.encode(PooledByteBufAllocator.DEFAULT, m, durable, 4, -1, false, deliveryCount,
            added);
        try {
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] deliver(byte[] message) throws AmqpDecodeException {
        return deliver(message, false, 0, new BrokerAnnotations());
    }

    @Test
    void aMessageWithDefaultsAndNoAnnotationsIsDeliveredAsReceived() throws AmqpDecodeException {
        byte[] message = concat(described(0x73, list0()), DATA);
        assertThat(deliver(message)).isEqualTo(message);
    }

    @Test
    void freshHeaderReplacesTheClientsHeaderWhoseBooleansWereTwoBytes() throws AmqpDecodeException {
        byte[] clientHeader = described(0x70, list8(bool2(true), nul(), nul(), bool2(false)));
        byte[] bare = concat(described(0x73, list8(nul(), nul(), str8("q"))), DATA);
        byte[] out = deliver(concat(clientHeader, bare), true, 1, new BrokerAnnotations());
        // durable=true, priority and ttl null, first-acquirer=false, delivery-count=1 (smalluint)
        assertThat(out).isEqualTo(concat(hex("00 53 70 c0 07 05 41 40 40 42 52 01"), bare));
    }

    @Test
    void headerAtItsDefaultsIsOmitted() throws AmqpDecodeException {
        byte[] bare = concat(described(0x73, list0()), DATA);
        assertThat(deliver(concat(described(0x70, list8(bool1(false))), bare))).isEqualTo(bare);
    }

    @Test
    void twoByteBooleansInApplicationPropertiesSurvive() throws AmqpDecodeException {
        byte[] bare = concat(described(0x74, map8(str8("a"), bool2(true), str8("b"), bool1(false))), DATA);
        assertThat(deliver(bare)).isEqualTo(bare);
    }

    @Test
    void list8AndList32AndTrailingNullsInPropertiesSurvive() throws AmqpDecodeException {
        byte[] withTrailingNulls = described(0x73, list8(nul(), nul(), str8("/queues/q"), nul(), nul(), nul()));
        byte[] list32 = described(0x73, list32(nul(), nul(), str8("/queues/q")));
        for (byte[] properties : new byte[][] {withTrailingNulls, list32, described(0x73, list0())}) {
            byte[] bare = concat(properties, DATA);
            byte[] out = deliver(bare, true, 0, new BrokerAnnotations());
            assertThat(out).isEqualTo(concat(hex("00 53 70 c0 02 01 41"), bare));
        }
    }

    @Test
    void longAndSymbolicDescriptorsSurvive() throws AmqpDecodeException {
        byte[] bare = concat(
            describedLong(0x73, list8(nul(), nul(), str8("to"))),
            describedSymbol("amqp:application-properties:map", map8(str8("k"), str8("v"))),
            describedSymbol("amqp:data:binary", BODY),
            describedLong(0x75, vbin32(new byte[] {1, 2})));
        MessageSections m = MessageSections.scan(Unpooled.wrappedBuffer(bare));
        assertThat(m.to()).isEqualTo("to");
        assertThat(m.applicationProperty("k")).isEqualTo("v");
        assertThat(m.bodySectionCount()).isEqualTo(2);
        assertThat(deliver(bare)).isEqualTo(bare);
    }

    @Test
    void footerChecksumsPassThroughAndStillVerify() throws AmqpDecodeException {
        byte[] bare = concat(described(0x73, list8(nul(), nul(), str8("q"))),
            described(0x74, map8(str8("k"), bool2(false))), DATA);
        CRC32 crc = new CRC32();
        crc.update(bare);
        Adler32 adler = new Adler32();
        adler.update(bare);
        byte[] footer = described(0x78, map8(sym8("x-opt-crc-32"), uint32(crc.getValue()),
            sym8("x-opt-adler-32"), uint32(adler.getValue())));
        byte[] message = concat(described(0x72, map8(sym8("x-opt-a"), str8("b"))), bare, footer);

        byte[] out = deliver(message, false, 2, new BrokerAnnotations().put("x-exchange", "e"));
        byte[] tail = java.util.Arrays.copyOfRange(out, out.length - bare.length - footer.length, out.length);
        assertThat(tail).isEqualTo(concat(bare, footer));
        CRC32 again = new CRC32();
        again.update(tail, 0, bare.length);
        assertThat(MessageSections.scan(Unpooled.wrappedBuffer(out)).footer())
            .containsEntry(org.apache.qpid.proton.amqp.Symbol.valueOf("x-opt-crc-32"),
                org.apache.qpid.proton.amqp.UnsignedInteger.valueOf(again.getValue()));
    }

    @Test
    void brokerAnnotationsReplaceTheClientsOfTheSameNameAndKeepTheOthersByteForByte() throws AmqpDecodeException {
        byte[] clientAnnotations = described(0x72, map8(sym8("x-exchange"), str8("old"), sym8("x-foo"), bool2(true),
            sym32("x-routing-key"), str8("old-key")));
        byte[] bare = concat(described(0x73, list0()), DATA);
        byte[] out = deliver(concat(clientAnnotations, bare), false, 0,
            new BrokerAnnotations().put("x-exchange", "new").put("x-routing-key", "k"));
        byte[] expectedAnnotations = described(0x72, map8(sym8("x-foo"), bool2(true), sym8("x-exchange"), str8("new"),
            sym8("x-routing-key"), str8("k")));
        assertThat(out).isEqualTo(concat(expectedAnnotations, bare));
    }

    @Test
    void clientAnnotationsAreCopiedVerbatimWhenTheBrokerAddsNone() throws AmqpDecodeException {
        byte[] clientAnnotations = describedSymbol("amqp:message-annotations:map", map32(sym8("x-a"), bool2(false)));
        byte[] bare = concat(described(0x73, list0()), DATA);
        assertThat(deliver(concat(clientAnnotations, bare))).isEqualTo(concat(clientAnnotations, bare));
    }

    @Test
    void deliveryAnnotationsAreForTheNextHopOnly() throws AmqpDecodeException {
        byte[] bare = concat(described(0x73, list0()), DATA);
        byte[] message = concat(described(0x71, map8(sym8("x-opt-hop"), str8("x"))), bare);
        assertThat(deliver(message)).isEqualTo(bare);
    }

    @Test
    void largeAnnotationsSwitchToMap32() throws AmqpDecodeException {
        String big = "x".repeat(300);
        byte[] bare = concat(described(0x73, list0()), DATA);
        byte[] out = deliver(bare, false, 0, new BrokerAnnotations().put("x-big", big));
        MessageSections m = MessageSections.scan(Unpooled.wrappedBuffer(out));
        assertThat(m.messageAnnotation("x-big")).isEqualTo(big);
        assertThat(out[3] & 0xff).isEqualTo(FormatCode.MAP32);
    }
}
