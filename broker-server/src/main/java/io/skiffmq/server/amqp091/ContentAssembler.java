package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.ContentHeader;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.message.Amqp091Message;

/**
 * Puts a channel's published messages together from their frames: {@code basic.publish}, the content header, then
 * body frames until the header's body size is reached [4.2.6]. Nothing is copied: the properties and body are the
 * frames' payloads, sliced from what was read (a body of several frames is a composite of them). Frames out of
 * this order are the connection errors RabbitMQ raises, with its texts; a body over {@code max-message-size} is
 * refused at its header. Owned by the connection's event loop.
 */
final class ContentAssembler {
    private static final int CONTENT_CLASS = BasicMethod.CLASS_ID;

    private final long maxMessageSize;
    private BasicMethod.Publish publishing;
    /** The method of the message completed last. */
    private BasicMethod.Publish completed;
    private ByteBuf properties;
    /** The body size its header announced; -1 until the header came. */
    private long size = -1;
    private ByteBuf body;

    ContentAssembler(long maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    /** A method frame arrived: it must not come while content is expected. */
    void checkNoContentExpected() {
        if (publishing != null) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing, size < 0
                ? "expected content header for class %d, got non content header frame instead"
                : "expected content body for class %d, got non content body frame instead", CONTENT_CLASS);
        }
    }

    /** True from a {@code basic.publish} until the last frame of its content. */
    boolean inProgress() {
        return publishing != null;
    }

    void start(BasicMethod.Publish publish) {
        publishing = publish;
        size = -1;
    }

    /** The {@code basic.publish} of the message {@link #header} or {@link #body} returned last. */
    BasicMethod.Publish completed() {
        return completed;
    }

    /** A content header; the message when its body is empty, else null. */
    Amqp091Message header(ByteBuf payload) throws Amqp091DecodeException {
        if (publishing == null) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null,
                "expected method frame, got non method frame instead");
        }
        if (size >= 0) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "expected content body for class %d, got non content body frame instead", CONTENT_CLASS);
        }
        ContentHeader header = ContentHeader.decode(payload);
        if (header.classId() != CONTENT_CLASS) {
            header.release();
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "content header for class %d, expected %d", header.classId(), CONTENT_CLASS);
        }
        if (header.bodySize() > maxMessageSize) {
            header.release();
            BasicMethod.Publish refused = publishing;
            publishing = null;
            // the body frames that follow are dropped with everything else once the channel is closing
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, refused,
                "message size %d is larger than configured max size %d", header.bodySize(), maxMessageSize);
        }
        properties = header.properties(); // the header's reference, taken over
        size = header.bodySize();
        if (size == 0) {
            body = payload.alloc().buffer(0, 0);
            return complete();
        }
        return null;
    }

    /** A body frame; the message once its body is whole, else null. */
    Amqp091Message body(ByteBuf payload) {
        if (publishing == null) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null,
                "expected method frame, got non method frame instead");
        }
        if (size < 0) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "expected content header for class %d, got non content header frame instead", CONTENT_CLASS);
        }
        long received = body == null ? 0 : body.readableBytes();
        if (received + payload.readableBytes() > size) {
            throw Amqp091Exception.of(ReplyCode.FRAME_ERROR, publishing,
                "content body frame exceeds remaining content size");
        }
        if (body == null) {
            body = payload.retain();
        } else {
            CompositeByteBuf composite;
            if (body instanceof CompositeByteBuf c) {
                composite = c;
            } else {
                composite = payload.alloc().compositeBuffer(Integer.MAX_VALUE).addComponent(true, body);
                body = composite;
            }
            composite.addComponent(true, payload.retain());
        }
        return body.readableBytes() == size ? complete() : null;
    }

    private Amqp091Message complete() {
        BasicMethod.Publish publish = publishing;
        completed = publish;
        ByteBuf p = properties;
        ByteBuf b = body;
        publishing = null;
        properties = null;
        body = null;
        size = -1;
        try {
            return Amqp091Message.of(p, b, publish.exchange(), publish.routingKey());
        } catch (Amqp091DecodeException e) {
            p.release();
            b.release();
            throw Amqp091Exception.of(e.replyCode(), publish, "content header properties: %s", e.getMessage());
        }
    }

    /** Drops what was received of an unfinished message. */
    void release() {
        if (properties != null) {
            properties.release();
            properties = null;
        }
        if (body != null) {
            body.release();
            body = null;
        }
        publishing = null;
    }
}
