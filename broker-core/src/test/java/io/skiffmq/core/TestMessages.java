package io.skiffmq.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import java.nio.charset.StandardCharsets;

/**
 * Messages for core tests: short texts in one {@code data} section, or messages of either format built from their
 * parts, encoded by proton-j (AMQP 1.0) or our codec (0-9-1).
 */
public final class TestMessages {
    private TestMessages() {
    }

    /** A durable message published to {@code exchange} with {@code routingKey}. */
    public static Message text(String body, String exchange, String routingKey) {
        byte[] text = body.getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = Unpooled.buffer().writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) text.length})
            .writeBytes(text);
        try {
            return Amqp10Message.of(buf, MessageSections.scan(buf), true, exchange, routingKey);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** A durable message to the queue {@code queue} through the default exchange. */
    public static Message text(String body, String queue) {
        return text(body, "", queue);
    }

    /** An AMQP 1.0 message of the given sections (proton-j section objects, in order). */
    public static Amqp10Message amqp10(Object... sections) {
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

    public static Amqp091Message amqp091(BasicProperties properties, byte[] body) {
        ByteBuf encoded = Unpooled.buffer();
        properties.encode(encoded);
        try {
            return Amqp091Message.of(encoded, Unpooled.wrappedBuffer(body), "amq.direct", "rk");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The text of a message made by {@link #text}. */
    public static String body(Message message) {
        String s = new String(ByteBufUtil.getBytes(message.toAmqp10().bytes()), StandardCharsets.UTF_8);
        return s.substring(5);
    }
}
