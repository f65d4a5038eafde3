package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.ByteCopy;
import io.skiffmq.codec.amqp10.MessageSections;

/**
 * What AMQP 0-9-1 content frames need of any message, without making its 0-9-1 form: the property flags and list,
 * written into the frame being built, and where the body lies. An AMQP 0-9-1 message gives its properties as
 * published; an AMQP 1.0 one (a stream's, or a classic queue's from an AMQP 1.0 publisher) is converted by walking its
 * sections in place ({@link SectionsToAmqp091}), its body read where it is, so a delivery allocates nothing for the
 * conversion. What the walk declines is converted once through {@link Message#toAmqp091()}, and kept.
 *
 * <p>Owned by one thread (a 0-9-1 connection's writer), reused for every message.
 */
public final class Amqp091Content {
    private final SectionsToAmqp091 sections = new SectionsToAmqp091();
    private ByteBuf body;
    private int bodyIndex;
    private int bodyLength;

    /**
     * Appends {@code message}'s 0-9-1 property flags and list at {@code out}'s writer index, the bytes
     * {@code message.toAmqp091().propertyBytes()} holds, and notes where its body is ({@link #body()}). The caller
     * keeps its reference to the message, and reads the body before it lets the message go.
     *
     * @throws IllegalStateException when an AMQP 1.0 message cannot be converted ({@link Message#toAmqp091()});
     *         nothing was written then
     */
    public void writeProperties(Message message, ByteBuf out) {
        if (message instanceof Amqp10Message m && sections.write(m, out)) {
            MessageSections s = m.sections();
            body = s.buffer();
            bodyIndex = Amqp10ToAmqp091.bodyIndex(s);
            bodyLength = Amqp10ToAmqp091.bodyLength(s);
            return;
        }
        Amqp091Message m = message.toAmqp091();
        ByteBuf properties = m.propertyBytes();
        ByteCopy.copy(out, properties, properties.readerIndex(), properties.readableBytes());
        body = m.body();
        bodyIndex = body.readerIndex();
        bodyLength = body.readableBytes();
    }

    /** The buffer the last message's body lies in: read, never change or release it. */
    public ByteBuf body() {
        return body;
    }

    /** Where the last message's body starts in {@link #body()}. */
    public int bodyIndex() {
        return bodyIndex;
    }

    /** The length of the last message's body. */
    public int bodyLength() {
        return bodyLength;
    }

    /** Lets go of the last body (the caller is done with it). */
    public void clear() {
        body = null;
    }
}
