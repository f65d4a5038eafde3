package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.FormatCode;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.amqp10.TypeReader;
import io.skiffmq.codec.amqp10.ValueDecoder;
import java.nio.charset.StandardCharsets;

/**
 * Where a stream's messages were published, as they are stored with them (the annotations {@code x-exchange} and
 * {@code x-routing-key}): read in place, and the strings of the message before reused while the stored bytes are
 * the same, as they are for the messages of one publisher, so reading them allocates nothing but for a new name.
 * Answers what {@link MessageSections#messageAnnotation} would ({@link Amqp10Message#fromStream}).
 *
 * <p>Owned by one thread (a stream consumer's).
 */
public final class StoredRouteNames {
    private final Last exchange = new Last();
    private final Last routingKey = new Last();

    /** The {@code x-exchange} annotation when it is a string, else null. */
    String exchange(MessageSections s) throws AmqpDecodeException {
        return read(s, Message.X_EXCHANGE, exchange);
    }

    /** The {@code x-routing-key} annotation when it is a string, else null. */
    String routingKey(MessageSections s) throws AmqpDecodeException {
        return read(s, Message.X_ROUTING_KEY, routingKey);
    }

    private static String read(MessageSections s, String key, Last last) throws AmqpDecodeException {
        int at = s.messageAnnotationIndex(key);
        if (at < 0) {
            return null;
        }
        ByteBuf buf = s.buffer();
        int limit = s.sectionEnd(SectionCode.MESSAGE_ANNOTATIONS);
        int code = buf.getUnsignedByte(at);
        if (code != FormatCode.STR8 && code != FormatCode.STR32) {
            // never a string then; decoded all the same, so a malformed value is refused as before
            return ValueDecoder.decode(buf, at, limit) instanceof String string ? string : null;
        }
        int start = TypeReader.variableContentStart(buf, at);
        return last.read(buf, start, TypeReader.valueEnd(buf, at, limit) - start);
    }

    /** The last string read under one key, and its bytes as stored (wrapped, for comparing in place). */
    private static final class Last {
        private ByteBuf bytes;
        private String string;

        String read(ByteBuf buf, int start, int length) {
            if (bytes == null || bytes.readableBytes() != length || !ByteBufUtil.equals(buf, start, bytes, 0, length)) {
                byte[] copy = ByteBufUtil.getBytes(buf, start, length);
                bytes = Unpooled.wrappedBuffer(copy);
                string = new String(copy, StandardCharsets.UTF_8);
            }
            return string;
        }
    }
}
