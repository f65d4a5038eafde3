package io.skiffmq.core.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * Every queued message keeps its {@link Message} object, so what only some messages have is not a field of every
 * message: a published AMQP 1.0 message, which has no stream offset and reaches its bytes through its index, is 48 bytes
 * (with compressed references), and one read from a stream keeps its offset; an AMQP 0-9-1 message without reply-to, user-id, a bad expiration or a death
 * history is 48 (the priority is kept in a byte, and those, its decoded properties and its AMQP 1.0 form in an object
 * made only when one is there). Measured per thread over many wraps after a warm-up.
 */
class MessageFootprintTest {
    private static final int ROUNDS = 20_000;

    @Test
    void aPublishedAmqp10MessageIsFortyEightBytes() throws Exception {
        // a data section of 4 bytes
        ByteBuf bytes = Unpooled.wrappedBuffer(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, 4, 1, 2, 3, 4});
        MessageSections sections = MessageSections.scan(bytes);
        assertThat(Allocations.perCall(ROUNDS, () -> Amqp10Message.of(bytes, sections, false, "", "q")))
            .isLessThanOrEqualTo(48);
        assertThat(Amqp10Message.of(bytes, sections, false, "", "q").bytes()).isSameAs(bytes);
        assertThatThrownBy(() -> Amqp10Message.of(bytes.duplicate(), sections, false, "", "q"))
            .as("an index of another buffer").isInstanceOf(IllegalArgumentException.class);
        assertThat(Amqp10Message.of(bytes, sections, false, "", "q").streamOffset()).isEqualTo(-1);

        Amqp10Message fromStream = Amqp10Message.fromStream(bytes.retain(), 42, "s");
        assertThat(fromStream.streamOffset()).isEqualTo(42);
        assertThat(fromStream.retain().streamOffset()).isEqualTo(42);
        fromStream.release();
        fromStream.release();
        bytes.release();
    }

    @Test
    void anAmqp091MessageWithoutReplyToUserIdOrHistoryIsFortyEightBytes() throws Exception {
        ByteBuf properties = Unpooled.wrappedBuffer(new byte[] {0, 0});
        ByteBuf body = Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4});
        assertThat(Allocations.perCall(ROUNDS, () -> Amqp091Message.converted(properties, body, false, 0, -1, "", "q")))
            .isLessThanOrEqualTo(48);
        Amqp091Message message = Amqp091Message.converted(properties, body, false, 0, -1, "", "q");
        assertThat(message.replyTo()).isNull();
        // the byte holds every priority unsigned
        assertThat(Amqp091Message.converted(properties, body, false, 255, -1, "", "q").priority()).isEqualTo(255);
        assertThat(Amqp091Message.converted(properties, body, false, 128, -1, "", "q").priority()).isEqualTo(128);
        assertThat(message.deaths()).isEmpty();

        // its lazy forms are made once and kept, and its AMQP 1.0 form released with it
        Amqp091Message lazy = Amqp091Message.converted(Unpooled.wrappedBuffer(new byte[] {0, 0}),
            Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4}), false, 0, -1, "", "q");
        assertThat(lazy.properties()).isSameAs(lazy.properties());
        Amqp10Message converted = lazy.toAmqp10();
        assertThat(lazy.toAmqp10()).isSameAs(converted);
        assertThat(lazy.properties()).as("kept beside the AMQP 1.0 form").isSameAs(lazy.properties());
        assertThat(lazy.release()).isTrue();
        assertThat(converted.refCnt()).isZero();
    }
}
