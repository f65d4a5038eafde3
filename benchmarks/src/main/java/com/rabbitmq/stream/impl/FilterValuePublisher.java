package com.rabbitmq.stream.impl;

import com.rabbitmq.stream.Codec;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Publish v2 (a filter value per message) on the stream client's protocol-level {@link Client}, for the stream load
 * tool: the client writes v2 only from its {@code Producer}, through the package-private
 * {@code Client.publishInternal}, hence this class in the client's package. Each entry is the publishing id, the
 * filter value (a string, or -1 for none) and the encoded message, as {@code StreamProducer} writes them. Stateless
 * but for its function; safe from any thread the client's {@code publish} is.
 */
public final class FilterValuePublisher {
    private static final short PUBLISH_V2 = 2;

    private final Client client;
    private final Client.OutboundEntityWriteCallback write;

    /**
     * @param filterValue a message's filter value (the messages are the client's {@link Codec.EncodedMessage}s),
     *     null for none
     */
    public FilterValuePublisher(Client client, Function<Object, String> filterValue) {
        this.client = client;
        this.write = new Client.OutboundEntityWriteCallback() {
            @Override
            public int write(ByteBuf out, Object entity, long publishingId) {
                String value = filterValue.apply(entity);
                if (value == null) {
                    out.writeShort(-1);
                } else {
                    Client.writeString(out, value);
                }
                ((Codec.EncodedMessage) entity).writeTo(out);
                return 1;
            }

            @Override
            public int fragmentLength(Object entity) {
                String value = filterValue.apply(entity);
                // publishing id 8, the value (its length 2, its bytes), the message's size field 4, the message
                return 8 + 2 + (value == null ? 0 : Client.stringByteSize(value)) + 4
                    + ((Codec.EncodedMessage) entity).getSize();
            }
        };
    }

    /** Publishes {@code messages} (already encoded) in publish v2 frames; see {@link Client#publish}. */
    @SuppressWarnings("unchecked")
    public List<Long> publish(byte publisherId, List<?> messages, ToLongFunction<Object> publishingId) {
        return client.publishInternal(PUBLISH_V2, publisherId, (List<Object>) messages, write, publishingId);
    }
}
