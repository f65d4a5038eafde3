package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * One AMQP 0-9-1 method: a record per method, grouped by class in {@link ConnectionMethod}, {@link ChannelMethod},
 * {@link ExchangeMethod}, {@link QueueMethod}, {@link BasicMethod}, {@link ConfirmMethod} and {@link TxMethod}.
 * Decoded and encoded by {@link MethodCodec}. Immutable.
 */
public sealed interface Method
    permits ConnectionMethod, ChannelMethod, ExchangeMethod, QueueMethod, BasicMethod, ConfirmMethod, TxMethod {

    int classId();

    int methodId();

    /** The spec's name, {@code basic.publish}: RabbitMQ's reply texts and logs name methods this way. */
    String name();

    /** True when content (a content header frame, then body frames) follows this method [4.2.6]. */
    default boolean hasContent() {
        return false;
    }

    /**
     * Appends the argument list (everything after class and method id) at {@code out}'s writer index.
     *
     * @throws IllegalArgumentException when a value does not fit its type (a short string over 255 UTF-8 bytes,
     *         a short or long out of its unsigned range, a table value with no 0-9-1 type)
     */
    void writeArguments(ByteBuf out);
}
