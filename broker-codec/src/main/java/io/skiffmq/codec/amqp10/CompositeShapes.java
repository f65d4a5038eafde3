package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.amqp10.FieldType.ANY;
import static io.skiffmq.codec.amqp10.FieldType.BINARY;
import static io.skiffmq.codec.amqp10.FieldType.BOOLEAN;
import static io.skiffmq.codec.amqp10.FieldType.ERROR;
import static io.skiffmq.codec.amqp10.FieldType.LIST;
import static io.skiffmq.codec.amqp10.FieldType.MAP;
import static io.skiffmq.codec.amqp10.FieldType.MESSAGE_ID;
import static io.skiffmq.codec.amqp10.FieldType.OUTCOME;
import static io.skiffmq.codec.amqp10.FieldType.RCV_SETTLE_MODE;
import static io.skiffmq.codec.amqp10.FieldType.SASL_CODE;
import static io.skiffmq.codec.amqp10.FieldType.SND_SETTLE_MODE;
import static io.skiffmq.codec.amqp10.FieldType.SOURCE;
import static io.skiffmq.codec.amqp10.FieldType.STATE;
import static io.skiffmq.codec.amqp10.FieldType.STRING;
import static io.skiffmq.codec.amqp10.FieldType.SYMBOL;
import static io.skiffmq.codec.amqp10.FieldType.SYMBOLS;
import static io.skiffmq.codec.amqp10.FieldType.TARGET;
import static io.skiffmq.codec.amqp10.FieldType.TIMESTAMP;
import static io.skiffmq.codec.amqp10.FieldType.UBYTE;
import static io.skiffmq.codec.amqp10.FieldType.UINT;
import static io.skiffmq.codec.amqp10.FieldType.ULONG;
import static io.skiffmq.codec.amqp10.FieldType.USHORT;

import io.netty.buffer.ByteBuf;

/**
 * The shapes of the described types AMQP 1.0 defines, checked before proton-j builds objects from them: a composite
 * [1.4] must be a list no longer than its fields, with every mandatory field present and not null and every field of
 * its declared {@link FieldType}; a message section [3.2] must be of its section's type. proton-j casts each field to
 * its Java type and its setters reject a missing mandatory field by throwing; checked here first, bad input is a
 * {@link DecodeFailure} naming the type and the field, never a {@code NullPointerException} or
 * {@code ClassCastException} inside proton-j. Every described value in the tree is checked, wherever it is nested.
 * Runs after {@link TypeReader#validate}, so sizes and counts are already known to be sound. Stateless.
 */
final class CompositeShapes {
    private static final Shape[] BY_CODE = new Shape[256];

    static {
        composite(0x10, "open", f("container-id", STRING, true), f("hostname", STRING), f("max-frame-size", UINT),
            f("channel-max", USHORT), f("idle-time-out", UINT), f("outgoing-locales", SYMBOLS),
            f("incoming-locales", SYMBOLS), f("offered-capabilities", SYMBOLS), f("desired-capabilities", SYMBOLS),
            f("properties", MAP));
        composite(0x11, "begin", f("remote-channel", USHORT), f("next-outgoing-id", UINT, true),
            f("incoming-window", UINT, true), f("outgoing-window", UINT, true), f("handle-max", UINT),
            f("offered-capabilities", SYMBOLS), f("desired-capabilities", SYMBOLS), f("properties", MAP));
        composite(0x12, "attach", f("name", STRING, true), f("handle", UINT, true), f("role", BOOLEAN, true),
            f("snd-settle-mode", SND_SETTLE_MODE), f("rcv-settle-mode", RCV_SETTLE_MODE), f("source", SOURCE), f("target", TARGET),
            f("unsettled", MAP), f("incomplete-unsettled", BOOLEAN), f("initial-delivery-count", UINT),
            f("max-message-size", ULONG), f("offered-capabilities", SYMBOLS), f("desired-capabilities", SYMBOLS),
            f("properties", MAP));
        composite(0x13, "flow", f("next-incoming-id", UINT), f("incoming-window", UINT, true),
            f("next-outgoing-id", UINT, true), f("outgoing-window", UINT, true), f("handle", UINT),
            f("delivery-count", UINT), f("link-credit", UINT), f("available", UINT), f("drain", BOOLEAN),
            f("echo", BOOLEAN), f("properties", MAP));
        composite(0x14, "transfer", f("handle", UINT, true), f("delivery-id", UINT), f("delivery-tag", BINARY),
            f("message-format", UINT), f("settled", BOOLEAN), f("more", BOOLEAN), f("rcv-settle-mode", RCV_SETTLE_MODE),
            f("state", STATE), f("resume", BOOLEAN), f("aborted", BOOLEAN), f("batchable", BOOLEAN));
        composite(0x15, "disposition", f("role", BOOLEAN, true), f("first", UINT, true), f("last", UINT),
            f("settled", BOOLEAN), f("state", STATE), f("batchable", BOOLEAN));
        composite(0x16, "detach", f("handle", UINT, true), f("closed", BOOLEAN), f("error", ERROR));
        composite(0x17, "end", f("error", ERROR));
        composite(0x18, "close", f("error", ERROR));
        composite(0x1d, "error", f("condition", SYMBOL, true), f("description", STRING), f("info", MAP));
        composite(0x23, "received", f("section-number", UINT, true), f("section-offset", ULONG, true));
        composite(0x24, "accepted");
        composite(0x25, "rejected", f("error", ERROR));
        composite(0x26, "released");
        composite(0x27, "modified", f("delivery-failed", BOOLEAN), f("undeliverable-here", BOOLEAN),
            f("message-annotations", MAP));
        composite(0x28, "source", f("address", STRING), f("durable", UINT), f("expiry-policy", SYMBOL),
            f("timeout", UINT), f("dynamic", BOOLEAN), f("dynamic-node-properties", MAP),
            f("distribution-mode", SYMBOL), f("filter", MAP), f("default-outcome", OUTCOME), f("outcomes", SYMBOLS),
            f("capabilities", SYMBOLS));
        composite(0x29, "target", f("address", STRING), f("durable", UINT), f("expiry-policy", SYMBOL),
            f("timeout", UINT), f("dynamic", BOOLEAN), f("dynamic-node-properties", MAP), f("capabilities", SYMBOLS));
        composite(0x2b, "delete-on-close");
        composite(0x2c, "delete-on-no-links");
        composite(0x2d, "delete-on-no-messages");
        composite(0x2e, "delete-on-no-links-or-messages");
        composite(0x30, "coordinator", f("capabilities", SYMBOLS));
        composite(0x31, "declare", f("global-id", ANY));
        composite(0x32, "discharge", f("txn-id", BINARY, true), f("fail", BOOLEAN));
        composite(0x33, "declared", f("txn-id", BINARY, true));
        composite(0x34, "transactional-state", f("txn-id", BINARY, true), f("outcome", OUTCOME));
        composite(0x40, "sasl-mechanisms", f("sasl-server-mechanisms", SYMBOLS, true));
        composite(0x41, "sasl-init", f("mechanism", SYMBOL, true), f("initial-response", BINARY),
            f("hostname", STRING));
        composite(0x42, "sasl-challenge", f("challenge", BINARY, true));
        composite(0x43, "sasl-response", f("response", BINARY, true));
        composite(0x44, "sasl-outcome", f("code", SASL_CODE, true), f("additional-data", BINARY));
        composite(0x70, "header", f("durable", BOOLEAN), f("priority", UBYTE), f("ttl", UINT),
            f("first-acquirer", BOOLEAN), f("delivery-count", UINT));
        composite(0x73, "properties", f("message-id", MESSAGE_ID), f("user-id", BINARY), f("to", STRING),
            f("subject", STRING), f("reply-to", STRING), f("correlation-id", MESSAGE_ID), f("content-type", SYMBOL),
            f("content-encoding", SYMBOL), f("absolute-expiry-time", TIMESTAMP), f("creation-time", TIMESTAMP),
            f("group-id", STRING), f("group-sequence", UINT), f("reply-to-group-id", STRING));
        section(0x71, "delivery-annotations", "map", MAP);
        section(0x72, "message-annotations", "map", MAP);
        section(0x74, "application-properties", "map", MAP);
        section(0x75, "data", "binary", BINARY);
        section(0x76, "amqp-sequence", "list", LIST);
        section(0x77, "amqp-value", "*", ANY);
        section(0x78, "footer", "map", MAP);
    }

    private static final Descriptor.SymbolTable SYMBOLS_TABLE = (buf, code, index, limit) -> {
        for (Shape shape : BY_CODE) {
            if (shape != null && TypeReader.utf8Equals(buf, code, index, limit, shape.symbol)) {
                return shape.code;
            }
        }
        return -1;
    };

    private CompositeShapes() {
    }

    /**
     * Checks every described value AMQP defines in the value at {@code index} (already validated, ending by
     * {@code limit}).
     *
     * @return the name of the value's own type when it is one AMQP defines ({@code "attach"}), else null
     */
    static String check(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        walk(buf, index, limit);
        if (TypeReader.formatCode(buf, index, limit) != FormatCode.DESCRIBED) {
            return null;
        }
        Shape shape = shape(buf, index, limit);
        return shape == null ? null : shape.name;
    }

    private static Shape shape(ByteBuf buf, int described, int limit) throws AmqpDecodeException {
        long code = Descriptor.code(buf, described, limit, SYMBOLS_TABLE);
        return code < 0 ? null : BY_CODE[(int) code];
    }

    /** Checks the value at {@code index} and everything nested in it. */
    private static void walk(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = TypeReader.formatCode(buf, index, limit);
        if (code == FormatCode.DESCRIBED) {
            int value = Descriptor.end(buf, index, limit);
            Shape shape = shape(buf, index, limit);
            if (shape == null) {
                walk(buf, value, limit);
            } else {
                shape.check(buf, value, limit);
            }
            return;
        }
        walkData(buf, code, index + 1, limit);
    }

    /** Checks what is nested in the data, at {@code data}, of a value whose constructor is {@code code}. */
    private static void walkData(ByteBuf buf, int code, int data, int limit) throws AmqpDecodeException {
        boolean array = FormatCode.isArray(code);
        if (!array && !FormatCode.isMap(code) && code != FormatCode.LIST8 && code != FormatCode.LIST32) {
            return;
        }
        int end = TypeReader.dataEnd(buf, code, data, limit);
        boolean small = FormatCode.hasOneByteSize(code);
        long count = small ? buf.getUnsignedByte(data + 1) : buf.getUnsignedInt(data + 4);
        int position = data + (small ? 2 : 8);
        if (!array) {
            for (long i = 0; i < count; i++) {
                walk(buf, position, end);
                position = TypeReader.valueEnd(buf, position, end);
            }
            return;
        }
        int element = TypeReader.formatCode(buf, position, end);
        if (element == FormatCode.DESCRIBED) {
            Shape shape = shape(buf, position, end);
            if (shape != null) {
                // proton-j would build each element from the shared constructor; no peer needs this
                throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "array of %s at %d", shape.name,
                    data - 1);
            }
            position = Descriptor.end(buf, position, end);
            element = TypeReader.formatCode(buf, position, end);
        }
        position++;
        for (long i = 0; i < count; i++) {
            walkData(buf, element, position, end);
            position = TypeReader.dataEnd(buf, element, position, end);
        }
    }

    private static Field f(String name, FieldType type) {
        return new Field(name, type, false);
    }

    private static Field f(String name, FieldType type, boolean mandatory) {
        return new Field(name, type, mandatory);
    }

    private static void composite(int code, String name, Field... fields) {
        BY_CODE[code] = new Shape(code, name, "amqp:" + name + ":list", null, fields);
    }

    private static void section(int code, String name, String encoding, FieldType type) {
        BY_CODE[code] = new Shape(code, name, "amqp:" + name + ":" + encoding, type, null);
    }

    private record Field(String name, FieldType type, boolean mandatory) {
    }

    /** A composite ({@code fields}) or a section whose value is of one {@code type}. */
    private record Shape(int code, String name, String symbol, FieldType type, Field[] fields) {
        void check(ByteBuf buf, int value, int limit) throws AmqpDecodeException {
            int code = TypeReader.formatCode(buf, value, limit);
            if (fields == null) {
                if (code != FormatCode.NULL && !type.accepts(code)) {
                    throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "%s section at %d is 0x%02x, not a %s",
                        name, value, code, type);
                }
                walk(buf, value, limit);
                return;
            }
            if (!LIST.accepts(code)) {
                throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "%s at %d is 0x%02x, not a list", name,
                    value, code);
            }
            int count = TypeReader.listCount(buf, value, limit);
            if (count > fields.length) {
                throw AmqpDecodeException.of(DecodeFailure.BAD_COUNT, "%s at %d has %d fields, at most %d", name,
                    value, count, fields.length);
            }
            int end = TypeReader.valueEnd(buf, value, limit);
            int position = TypeReader.compoundContentStart(buf, value);
            for (int i = 0; i < fields.length; i++) {
                if (i >= count || TypeReader.isNull(buf, position, end)) {
                    if (fields[i].mandatory) {
                        throw AmqpDecodeException.of(DecodeFailure.MISSING_FIELD, "%s without %s", name,
                            fields[i].name);
                    }
                } else {
                    checkField(fields[i], buf, position, end);
                }
                if (i < count) {
                    position = TypeReader.valueEnd(buf, position, end);
                }
            }
        }

        private void checkField(Field field, ByteBuf buf, int index, int end) throws AmqpDecodeException {
            int code = TypeReader.formatCode(buf, index, end);
            boolean fits;
            if (field.type.described()) {
                fits = code == FormatCode.DESCRIBED && field.type.accepts(Descriptor.code(buf, index, end, SYMBOLS_TABLE));
            } else if (field.type == SYMBOLS && FormatCode.isArray(code)) {
                fits = SYMBOL.accepts(TypeReader.formatCode(buf, TypeReader.compoundContentStart(buf, index), end));
            } else {
                fits = field.type.accepts(code)
                    && (field.type.max() < 0 || buf.getUnsignedByte(index + 1) <= field.type.max());
            }
            if (!fits) {
                throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "%s %s at %d is not a %s", name,
                    field.name, index, field.type);
            }
            walk(buf, index, end);
        }
    }
}
