package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * Where a consumer starts: a uint16 type, then a 64-bit value for {@link Type#OFFSET} (unsigned) and
 * {@link Type#TIMESTAMP} (signed, milliseconds since the epoch) only; first, last and next carry no value
 * (PROTOCOL.adoc "Subscribe", {@code rabbit_stream_core}). {@link Type#NONE} appears only in a consumer update
 * response, for "as the subscription said". Immutable.
 *
 * @param value the offset or timestamp; 0 for the types without a value
 */
public record OffsetSpec(Type type, long value) {
    public enum Type {
        NONE(0),
        FIRST(1),
        /** The start of the last chunk. */
        LAST(2),
        NEXT(3),
        OFFSET(4),
        TIMESTAMP(5);

        private final int code;

        Type(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }

        /** Whether a 64-bit value follows the type on the wire. */
        public boolean hasValue() {
            return this == OFFSET || this == TIMESTAMP;
        }

        /** The type for {@code code}, or null. */
        public static Type of(int code) {
            return code >= 0 && code <= 5 ? values()[code] : null;
        }
    }

    public static final OffsetSpec NONE = new OffsetSpec(Type.NONE, 0);
    public static final OffsetSpec FIRST = new OffsetSpec(Type.FIRST, 0);
    public static final OffsetSpec LAST = new OffsetSpec(Type.LAST, 0);
    public static final OffsetSpec NEXT = new OffsetSpec(Type.NEXT, 0);

    public OffsetSpec {
        if (type == null || (!type.hasValue() && value != 0)) {
            throw new IllegalArgumentException("offset spec " + type + " with value " + value);
        }
    }

    public static OffsetSpec offset(long offset) {
        return new OffsetSpec(Type.OFFSET, offset);
    }

    public static OffsetSpec timestamp(long millis) {
        return new OffsetSpec(Type.TIMESTAMP, millis);
    }

    void write(ByteBuf out) {
        out.writeShort(type.code);
        if (type.hasValue()) {
            out.writeLong(value);
        }
    }

    /** Reads a type and its value; {@code allowNone} only for the consumer update response. */
    static OffsetSpec read(ByteBuf in, boolean allowNone) throws StreamDecodeException {
        int code = Wire.readUint16(in, "offset type");
        Type type = Type.of(code);
        if (type == null || (type == Type.NONE && !allowNone)) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "offset type %d", code);
        }
        return switch (type) {
            case NONE -> NONE;
            case FIRST -> FIRST;
            case LAST -> LAST;
            case NEXT -> NEXT;
            case OFFSET, TIMESTAMP -> new OffsetSpec(type, Wire.readInt64(in, "offset"));
        };
    }
}
