package io.skiffmq.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import java.nio.charset.StandardCharsets;

/** AMQP 1.0 messages for core tests: one {@code data} section holding a short text. */
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

    /** The text of a message made here. */
    public static String body(Message message) {
        String s = new String(ByteBufUtil.getBytes(message.toAmqp10().bytes()), StandardCharsets.UTF_8);
        return s.substring(5);
    }
}
