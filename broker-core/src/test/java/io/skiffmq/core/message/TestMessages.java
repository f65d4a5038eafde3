package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;

/** Builds messages of either format from their parts, encoded by proton-j (AMQP 1.0) or our codec (0-9-1). */
final class TestMessages {
    private TestMessages() {
    }

    /** An AMQP 1.0 message of the given sections (proton-j section objects, in order). */
    static Amqp10Message amqp10(Object... sections) {
        ByteBuf bytes = Unpooled.buffer();
        for (Object section : sections) {
            ProtonCodec.current().encode(section, bytes);
        }
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "amq.direct", "rk");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static Amqp091Message amqp091(BasicProperties properties, byte[] body) {
        ByteBuf encoded = Unpooled.buffer();
        properties.encode(encoded);
        try {
            return Amqp091Message.of(encoded, Unpooled.wrappedBuffer(body), "amq.direct", "rk");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
