package io.skiffmq.codec.amqp091;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

class BasicPropertiesTest {

    static BasicProperties all() {
        return new BasicProperties("application/json", "gzip", FieldTableTest.everyType(), 2, 7, "corr-1",
            "replies", "60000", "msg-1", Instant.ofEpochSecond(1_700_000_000L), "order.created", "guest", "app",
            "cluster");
    }

    private static byte[] encode(BasicProperties p) {
        ByteBuf out = Unpooled.buffer();
        p.encode(out);
        return ByteBufUtil.getBytes(out);
    }

    @Test
    void everyPropertyRoundTrips() throws Exception {
        byte[] bytes = encode(all());
        assertThat(bytes[0] & 0xff).isEqualTo(0xff);
        assertThat(bytes[1] & 0xff).as("bits 7..2 set, 1 and 0 clear").isEqualTo(0xfc);
        BasicProperties decoded = BasicProperties.decode(Unpooled.wrappedBuffer(bytes));
        assertThat(decoded).isEqualTo(all());
        assertThat(decoded.persistent()).isTrue();
        assertThat(encode(decoded)).isEqualTo(bytes);
    }

    @Test
    void absentPropertiesTakeNoBytes() throws Exception {
        assertThat(encode(BasicProperties.EMPTY)).isEqualTo(hex("0000"));
        // delivery-mode 1 and a message-id only: flags 0x1080
        byte[] wire = hex("1080" + "01" + "02" + "6964");
        BasicProperties p = BasicProperties.decode(Unpooled.wrappedBuffer(wire));
        assertThat(p).isEqualTo(new BasicProperties(null, null, null, 1, null, null, null, null, "id", null, null,
            null, null, null));
        assertThat(p.persistent()).isFalse();
        assertThat(encode(p)).isEqualTo(wire);
    }

    @Test
    void decodingLeavesTheBufferAsItWas() throws Exception {
        ByteBuf in = Unpooled.wrappedBuffer(encode(all()));
        int reader = in.readerIndex();
        BasicProperties.decode(in);
        assertThat(in.readerIndex()).isEqualTo(reader);
        assertThat(in.refCnt()).isEqualTo(1);
    }

    @Test
    void malformedPropertiesAreTypedErrors() {
        byte[] bytes = encode(all());
        for (int length = 0; length < bytes.length; length++) {
            byte[] cut = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> BasicProperties.decode(Unpooled.wrappedBuffer(cut))).as("cut at %d", length)
                .isInstanceOf(Amqp091DecodeException.class);
        }
        assertThatThrownBy(() -> BasicProperties.decode(Unpooled.wrappedBuffer(hex("0001"))))
            .isInstanceOf(Amqp091DecodeException.class).hasMessageContaining("does not define");
        assertThatThrownBy(() -> BasicProperties.decode(Unpooled.wrappedBuffer(hex("0000ff"))))
            .isInstanceOf(Amqp091DecodeException.class).hasMessageContaining("after the last property");
    }

    @Test
    void outOfRangeValuesAreRefusedOnEncode() {
        BasicProperties p = new BasicProperties(null, null, null, 256, null, null, null, null, null, null, null,
            null, null, null);
        assertThatThrownBy(() -> encode(p)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void headersMayContainFindsAFieldNameInPlaceAndNeverMissesOne() {
        BasicProperties cc = new BasicProperties("text/plain", "gzip", java.util.Map.of("CC",
            java.util.List.of("a")), 2, null, null, null, null, null, null, null, null, null, null);
        ByteBuf bytes = Unpooled.wrappedBuffer(encode(cc));
        assertThat(BasicProperties.headersMayContain(bytes, "CC")).isTrue();
        assertThat(BasicProperties.headersMayContain(bytes, "BCC")).isFalse();
        assertThat(bytes.readerIndex()).isZero();
        // a value holding the name's bytes is a false positive, which a decode settles
        BasicProperties lookalike = new BasicProperties(null, null, java.util.Map.of("note", "\u0003BCC"), null,
            null, null, null, null, null, null, null, null, null, null);
        assertThat(BasicProperties.headersMayContain(Unpooled.wrappedBuffer(encode(lookalike)), "BCC")).isTrue();
        // the name in another property is no header
        BasicProperties elsewhere = new BasicProperties("CC", null, java.util.Map.of("x", 1), null, null, "BCC",
            null, null, null, null, null, null, null, null);
        assertThat(BasicProperties.headersMayContain(Unpooled.wrappedBuffer(encode(elsewhere)), "CC")).isFalse();
        assertThat(BasicProperties.headersMayContain(Unpooled.wrappedBuffer(encode(elsewhere)), "BCC")).isFalse();
        assertThat(BasicProperties.headersMayContain(Unpooled.wrappedBuffer(encode(BasicProperties.EMPTY)), "CC"))
            .isFalse();
        // cut short anywhere: never an exception
        byte[] all = encode(cc);
        for (int length = 0; length < all.length; length++) {
            BasicProperties.headersMayContain(Unpooled.wrappedBuffer(all, 0, length), "CC");
        }
    }

    /**
     * Every published message is summarised: it costs the summary record (32 bytes) and no view of the buffer, and
     * leaves the buffer's indexes as they were, also when the properties are cut short.
     */
    @Test
    void summarizingAllocatesOnlyTheSummary() throws Exception {
        ByteBuf in = Unpooled.buffer();
        new BasicProperties(null, null, null, 1, null, null, null, null, null, null, null, null, null, null).encode(in);
        in.readerIndex(0);
        // a message with no reply-to, expiration or user-id gets a summary made once
        assertThat(Allocations.perCall(20_000, () -> BasicProperties.summarize(in))).isZero();
        assertThat(BasicProperties.summarize(in)).isEqualTo(new BasicProperties.Summary(1, -1, null, null, null));
        assertThat(in.readerIndex()).isZero();

        ByteBuf prioritized = Unpooled.buffer();
        new BasicProperties(null, null, null, 2, 9, null, null, null, null, null, null, null, null, null)
            .encode(prioritized);
        assertThat(Allocations.perCall(20_000, () -> BasicProperties.summarize(prioritized))).isZero();
        assertThat(BasicProperties.summarize(prioritized))
            .isEqualTo(new BasicProperties.Summary(2, 9, null, null, null));

        // past the shared ones, a summary of its own: priority 10, delivery-mode 3, or any of the strings
        for (BasicProperties p : List.of(
                new BasicProperties(null, null, null, 2, 10, null, null, null, null, null, null, null, null, null),
                new BasicProperties(null, null, null, 3, null, null, null, null, null, null, null, null, null, null),
                new BasicProperties(null, null, null, 1, 0, null, "r", null, null, null, null, null, null, null),
                new BasicProperties(null, null, null, null, null, null, null, "60", null, null, null, null, null,
                    null),
                new BasicProperties(null, null, null, null, null, null, null, null, null, null, null, "u", null,
                    null))) {
            ByteBuf b = Unpooled.buffer();
            p.encode(b);
            assertThat(BasicProperties.summarize(b)).isEqualTo(new BasicProperties.Summary(
                p.deliveryMode() == null ? -1 : p.deliveryMode(), p.priority() == null ? -1 : p.priority(),
                p.replyTo(), p.expiration(), p.userId()));
            assertThat(Allocations.perCall(20_000, () -> BasicProperties.summarize(b))).isLessThanOrEqualTo(32 + 48);
        }

        ByteBuf cut = Unpooled.wrappedBuffer(encode(all()), 0, 40);
        assertThatThrownBy(() -> BasicProperties.summarize(cut)).isInstanceOf(Amqp091DecodeException.class);
        assertThat(cut.readerIndex()).isZero();
    }
}
