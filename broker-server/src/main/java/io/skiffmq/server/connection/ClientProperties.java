package io.skiffmq.server.connection;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.FieldTable;
import io.skiffmq.core.message.HeaderValues;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a client said of itself: 0-9-1 {@code start-ok}'s client-properties, AMQP 1.0 {@code open}'s properties, as
 * the HTTP API's {@code client_properties} and {@code user_provided_name} show them. A connection keeps them as one
 * byte array, the 0-9-1 field table encoding (AMQP 1.0's converted as RabbitMQ converts them,
 * {@code mc_amqpl:to_091}), and they are decoded only when asked for: an idle connection pays their encoded size,
 * which the handshake's frame limits bound ({@code amqp091-initial-frame-max}, {@code initial-max-frame-size}).
 * Stateless; safe from any thread.
 */
public final class ClientProperties {
    /** The client property RabbitMQ shows as the connection's {@code user_provided_name} (0-9-1 only). */
    public static final String CONNECTION_NAME = "connection_name";

    private ClientProperties() {
    }

    /** A 0-9-1 client's properties, encoded; null when there are none. */
    public static byte[] ofAmqp091(Map<String, Object> table) {
        return table == null || table.isEmpty() ? null : encode(table);
    }

    /**
     * An AMQP 1.0 client's {@code open} properties, encoded as a 0-9-1 table: values with no 0-9-1 type (uuids,
     * AMQP 1.0 decimals) are left out; null when none are left.
     */
    public static byte[] ofAmqp10(Map<?, ?> properties) {
        Map<String, Object> table = new LinkedHashMap<>();
        HeaderValues.normaliseMap(properties).forEach((key, value) -> {
            if (HeaderValues.fitsAmqp091(value)) {
                table.put(key, value);
            }
        });
        return table.isEmpty() ? null : encode(table);
    }

    private static byte[] encode(Map<String, Object> table) {
        ByteBuf out = Unpooled.buffer();
        try {
            FieldTable.writeTable(out, table);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } catch (IllegalArgumentException e) {
            return null; // a name over 255 bytes (AMQP 1.0 symbols may be longer): nothing to show rather than a lie
        } finally {
            out.release();
        }
    }

    /** The properties as a table of neutral values ({@link FieldTable}); empty for null. */
    public static Map<String, Object> decode(byte[] encoded) {
        if (encoded == null) {
            return Map.of();
        }
        try {
            return FieldTable.readTable(Unpooled.wrappedBuffer(encoded));
        } catch (Amqp091DecodeException e) {
            throw new IllegalStateException("client properties we encoded do not decode", e);
        }
    }

    /** RabbitMQ's {@code user_provided_name}: the {@code connection_name} property when it is a string; or null. */
    public static String connectionName(byte[] encoded) {
        return encoded != null && decode(encoded).get(CONNECTION_NAME) instanceof String name ? name : null;
    }
}
