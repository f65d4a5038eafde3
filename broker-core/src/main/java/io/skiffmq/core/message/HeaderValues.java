package io.skiffmq.core.message;

import io.skiffmq.codec.Bytes;
import java.lang.reflect.Array;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;

/**
 * The one value model for header values, whatever the protocol: {@code String}, {@code Long}, {@code Integer},
 * {@code Short}, {@code Byte}, {@code Boolean}, {@code Double}, {@code Float}, {@code BigDecimal}, {@link Bytes},
 * {@code Instant} (timestamps), {@code UUID}, {@code Map<String, Object>}, {@code List<Object>} and null. It is
 * what AMQP 0-9-1 field tables decode to ({@link io.skiffmq.codec.amqp091.FieldTable}); this class brings
 * proton-j's AMQP 1.0 values to it. Stateless; safe from any thread.
 *
 * <p>AMQP 1.0 unsigned integers widen to the next signed type (ulong to long, as RabbitMQ: values past
 * {@code Long.MAX_VALUE} wrap); symbols and chars become strings; arrays become lists. Values with no neutral form
 * (decimal32/64/128, described values) are {@link #UNSUPPORTED}, and maps leave them out.
 */
public final class HeaderValues {
    /** What {@link #normalise} returns for a value with no neutral form. */
    public static final Object UNSUPPORTED = new Object() {
        @Override
        public String toString() {
            return "UNSUPPORTED";
        }
    };

    private HeaderValues() {
    }

    /** The neutral form of {@code value}, or {@link #UNSUPPORTED}. Neutral values come back as they are. */
    public static Object normalise(Object value) {
        if (value == null || value instanceof String || value instanceof Long || value instanceof Integer
                || value instanceof Boolean || value instanceof Short || value instanceof Byte
                || value instanceof Double || value instanceof Float || value instanceof java.math.BigDecimal
                || value instanceof Bytes || value instanceof Instant || value instanceof UUID) {
            return value;
        }
        if (value instanceof Symbol s) {
            return s.toString();
        }
        if (value instanceof UnsignedInteger u) {
            return u.longValue();
        }
        if (value instanceof UnsignedLong u) {
            return u.longValue();
        }
        if (value instanceof UnsignedShort u) {
            return u.intValue();
        }
        if (value instanceof UnsignedByte u) {
            return u.shortValue();
        }
        if (value instanceof Binary b) {
            byte[] bytes = new byte[b.getLength()];
            System.arraycopy(b.getArray(), b.getArrayOffset(), bytes, 0, b.getLength());
            return Bytes.wrap(bytes);
        }
        if (value instanceof byte[] b) {
            return Bytes.wrap(b.clone());
        }
        if (value instanceof Date d) {
            return Instant.ofEpochMilli(d.getTime());
        }
        if (value instanceof Character c) {
            return c.toString();
        }
        if (value instanceof Map<?, ?> m) {
            return normaliseMap(m);
        }
        if (value instanceof List<?> l) {
            return normaliseList(l);
        }
        if (value instanceof Object[] array) {
            return normaliseList(java.util.Arrays.asList(array));
        }
        if (value.getClass().isArray()) {
            // proton-j decodes an AMQP array of a primitive type to a primitive Java array (int[], long[]…)
            List<Object> boxed = new ArrayList<>(Array.getLength(value));
            for (int i = 0; i < Array.getLength(value); i++) {
                boxed.add(Array.get(value, i));
            }
            return normaliseList(boxed);
        }
        return UNSUPPORTED;
    }

    /**
     * True when a neutral value has an AMQP 0-9-1 field type all through: no UUID, no decimal beyond 0-9-1's (scale
     * 0..255, a 32-bit unscaled value).
     */
    public static boolean fitsAmqp091(Object value) {
        if (value instanceof UUID) {
            return false;
        }
        if (value instanceof java.math.BigDecimal d) {
            return d.scale() >= 0 && d.scale() <= 255 && d.unscaledValue().bitLength() <= 31;
        }
        if (value instanceof Map<?, ?> m) {
            return m.values().stream().allMatch(HeaderValues::fitsAmqp091);
        }
        if (value instanceof List<?> l) {
            return l.stream().allMatch(HeaderValues::fitsAmqp091);
        }
        return true;
    }

    /**
     * A map of neutral values with string keys (symbols become strings; other keys and unsupported values are
     * left out), unmodifiable. Null gives an empty map.
     */
    public static Map<String, Object> normaliseMap(Map<?, ?> map) {
        if (map == null || map.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> out = new LinkedHashMap<>(map.size() * 2);
        for (Map.Entry<?, ?> e : map.entrySet()) {
            Object key = e.getKey();
            if (!(key instanceof String || key instanceof Symbol)) {
                continue;
            }
            Object value = normalise(e.getValue());
            if (value != UNSUPPORTED) {
                out.put(key.toString(), value);
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * An unmodifiable copy of a field table (arguments, headers) in its order. Not {@code Map.copyOf}: it refuses
     * null values, and a void field value ({@code V}) decodes to null. Null or empty gives an empty map.
     */
    public static Map<String, Object> copyOf(Map<String, ?> table) {
        return table == null || table.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(table));
    }

    /**
     * The AMQP 0-9-1 field type RabbitMQ names for a value in its refusals ({@code rabbit_framing}'s table types:
     * {@code longstr}, {@code signedint}, {@code void} for null…). Unsigned types widened when decoded are named by
     * the type they widened to.
     */
    public static String fieldType(Object value) {
        if (value == null) {
            return "void";
        }
        if (value instanceof CharSequence) {
            return "longstr";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        if (value instanceof Long) {
            return "long";
        }
        if (value instanceof Integer) {
            return "signedint";
        }
        if (value instanceof Short) {
            return "short";
        }
        if (value instanceof Byte) {
            return "byte";
        }
        if (value instanceof Double) {
            return "double";
        }
        if (value instanceof Float) {
            return "float";
        }
        if (value instanceof java.math.BigDecimal) {
            return "decimal";
        }
        if (value instanceof Map) {
            return "table";
        }
        if (value instanceof List || value.getClass().isArray() && !(value instanceof byte[])) {
            return "array";
        }
        if (value instanceof byte[] || value instanceof Bytes) {
            return "binary";
        }
        if (value instanceof Date || value instanceof Instant) {
            return "timestamp";
        }
        return value.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
    }

    private static List<Object> normaliseList(List<?> list) {
        List<Object> out = new ArrayList<>(list.size());
        for (Object o : list) {
            Object value = normalise(o);
            if (value != UNSUPPORTED) {
                out.add(value);
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** Milliseconds since the epoch, saturated: 0-9-1 seconds reach further than a long of milliseconds. */
    static long millis(Instant t) {
        try {
            return t.toEpochMilli();
        } catch (ArithmeticException e) {
            return t.isBefore(Instant.EPOCH) ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /**
     * The AMQP 1.0 (proton-j) form of a neutral value, for converted messages: the inverse of {@link #normalise}
     * where there is one ({@code Bytes} to {@code binary}, {@code Instant} to {@code timestamp}), decimals
     * excepted ({@link #UNSUPPORTED}).
     */
    public static Object toAmqp10(Object value) {
        if (value instanceof Bytes b) {
            return new Binary(b.array());
        }
        if (value instanceof Instant t) {
            return new Date(millis(t));
        }
        if (value instanceof java.math.BigDecimal) {
            return UNSUPPORTED;
        }
        if (value instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                Object v = toAmqp10(e.getValue());
                if (v != UNSUPPORTED) {
                    out.put(e.getKey().toString(), v);
                }
            }
            return out;
        }
        if (value instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            for (Object o : l) {
                Object v = toAmqp10(o);
                if (v != UNSUPPORTED) {
                    out.add(v);
                }
            }
            return out;
        }
        return value;
    }
}
