package io.skiffmq.core.message;

import static io.skiffmq.codec.amqp091.BasicProperties.APP_ID;
import static io.skiffmq.codec.amqp091.BasicProperties.CONTENT_ENCODING;
import static io.skiffmq.codec.amqp091.BasicProperties.CONTENT_TYPE;
import static io.skiffmq.codec.amqp091.BasicProperties.CORRELATION_ID;
import static io.skiffmq.codec.amqp091.BasicProperties.DELIVERY_MODE;
import static io.skiffmq.codec.amqp091.BasicProperties.EXPIRATION;
import static io.skiffmq.codec.amqp091.BasicProperties.HEADERS;
import static io.skiffmq.codec.amqp091.BasicProperties.MESSAGE_ID;
import static io.skiffmq.codec.amqp091.BasicProperties.PRIORITY;
import static io.skiffmq.codec.amqp091.BasicProperties.REPLY_TO;
import static io.skiffmq.codec.amqp091.BasicProperties.TIMESTAMP;
import static io.skiffmq.codec.amqp091.BasicProperties.TYPE;
import static io.skiffmq.codec.amqp091.BasicProperties.USER_ID;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.FormatCode;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.amqp10.TypeReader;
import java.nio.charset.StandardCharsets;

/**
 * AMQP 1.0 to AMQP 0-9-1 properties by walking the message's sections where they lie: the bytes
 * {@link Amqp10ToAmqp091} gives (RabbitMQ 4's rules, {@code docs/messages.md}), written straight into a frame or a
 * buffer, with no map, String or property object in between. It handles what messages hold in practice: ASCII
 * names and strings, every primitive type, lists and maps of them. It declines ({@link #write} answers false, having
 * written nothing) what it cannot convert exactly so, and the caller falls back to {@link Amqp10ToAmqp091}'s maps:
 *
 * <ul>
 *   <li>non-ASCII names and property strings, and non-ASCII strings inside lists and maps (the maps decode them
 *       with proton-j, which refuses some);</li>
 *   <li>arrays and described values in headers, and the {@code x-opt-deaths} history;</li>
 *   <li>a header name met twice (also across annotations, application properties and the names the conversion
 *       adds), where the maps keep the first place and the last value: names are compared by a 64-bit hash, so a
 *       collision declines too;</li>
 *   <li>more than {@link #MAX_NAMES} header names, and anything malformed (the maps report it).</li>
 * </ul>
 *
 * <p>Owned by one thread at a time: its scratch (the names seen so far) is reused for every message.
 */
final class SectionsToAmqp091 {
    /** Header names (top level and nested, all at once) kept to find repeats; past this, the maps convert. */
    static final int MAX_NAMES = 64;

    /** What became of a value: written, left out (no neutral form), or the whole header dropped (a uuid in it). */
    private static final int WRITTEN = 0;
    private static final int LEFT_OUT = 1;
    private static final int NO_091_TYPE = 2;

    private static final long X_STREAM_OFFSET = hash(Amqp10Message.X_STREAM_OFFSET);
    private static final long CC = hash(HeaderRoutes.CC);
    private static final long X_MESSAGE_ID = hash(Amqp10ToAmqp091.X_MESSAGE_ID);
    private static final long X_CORRELATION_ID = hash(Amqp10ToAmqp091.X_CORRELATION_ID);
    private static final byte[] AMQP_1_0_TYPE = Amqp10ToAmqp091.AMQP_1_0_TYPE.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] URN_UUID = "urn:uuid:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** Thrown to decline: stackless, shared. */
    private static final class Declined extends Exception {
        Declined() {
            super("the maps convert this message", null, false, false);
        }
    }

    private static final Declined DECLINED = new Declined();

    private final long[] names = new long[MAX_NAMES];
    private int nameCount;
    private ByteBuf buf;

    /**
     * Appends {@code m}'s 0-9-1 property flags and list at {@code out}'s writer index, as {@link Amqp10ToAmqp091}
     * would encode them, or nothing.
     *
     * @return false when declined: {@code out} is as it was, and the maps must convert
     */
    boolean write(Amqp10Message m, ByteBuf out) {
        int start = out.writerIndex();
        try {
            buf = m.sections().buffer();
            properties(m, m.sections(), out);
            return true;
        } catch (Declined | AmqpDecodeException e) {
            out.writerIndex(start);
            return false;
        } finally {
            buf = null;
            nameCount = 0;
        }
    }

    private void properties(Amqp10Message m, MessageSections s, ByteBuf out) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        // the property fields the conversion reads [3.2.4], where they are: -1 when absent or null
        int messageId = -1;
        int userId = -1;
        int replyTo = -1;
        int correlationId = -1;
        int contentType = -1;
        int contentEncoding = -1;
        int creationTime = -1;
        int groupId = -1;
        int list = s.sectionValue(SectionCode.PROPERTIES);
        int limit = list < 0 ? -1 : s.sectionEnd(SectionCode.PROPERTIES);
        if (list >= 0 && b.getUnsignedByte(list) != FormatCode.NULL) {
            int count = Math.min(TypeReader.listCount(b, list, limit), 11); // the last one read is group-id
            int at = TypeReader.compoundContentStart(b, list);
            for (int field = 0; field < count; field++) {
                int next = TypeReader.valueEnd(b, at, limit);
                int code = b.getUnsignedByte(at);
                if (code != FormatCode.NULL) {
                    switch (field) {
                        case 0 -> messageId = id(at, code);
                        case 1 -> userId = expect(at, code == FormatCode.VBIN8 || code == FormatCode.VBIN32);
                        case 4 -> replyTo = expect(at, isString(code));
                        case 5 -> correlationId = id(at, code);
                        case 6 -> contentType = expect(at, isSymbol(code));
                        case 7 -> contentEncoding = expect(at, isSymbol(code));
                        case 9 -> creationTime = expect(at, code == FormatCode.TIMESTAMP);
                        case 10 -> groupId = expect(at, isString(code));
                        default -> {
                            // to, subject, absolute-expiry-time: not carried
                        }
                    }
                }
                at = next;
            }
        }

        int flagsAt = out.writerIndex();
        out.writeShort(0);
        int flags = 0;
        if (contentType >= 0 && shortString(out, contentType, limit)) {
            flags |= CONTENT_TYPE;
        }
        if (contentEncoding >= 0 && shortString(out, contentEncoding, limit)) {
            flags |= CONTENT_ENCODING;
        }

        int tableAt = out.writerIndex();
        out.writeInt(0);
        if (m.streamOffset() >= 0) {
            name(X_STREAM_OFFSET);
            writeAsciiShortString(out, Amqp10Message.X_STREAM_OFFSET);
            out.writeByte('l').writeLong(m.streamOffset());
        }
        int basicType = annotations(s, out);
        applicationProperties(s, out);
        idHeader(out, messageId, limit, X_MESSAGE_ID, Amqp10ToAmqp091.X_MESSAGE_ID);
        idHeader(out, correlationId, limit, X_CORRELATION_ID, Amqp10ToAmqp091.X_CORRELATION_ID);
        if (out.writerIndex() > tableAt + 4) {
            out.setInt(tableAt, out.writerIndex() - tableAt - 4);
            flags |= HEADERS;
        } else {
            out.writerIndex(tableAt);
        }

        flags |= DELIVERY_MODE;
        out.writeByte(m.durable() ? 2 : 1);
        if (s.has(SectionCode.HEADER)) {
            flags |= PRIORITY;
            out.writeByte(s.priority());
        }
        if (correlationId >= 0 && idProperty(out, correlationId, limit)) {
            flags |= CORRELATION_ID;
        }
        if (replyTo >= 0 && shortString(out, replyTo, limit)) {
            flags |= REPLY_TO;
        }
        if (m.ttl() >= 0) {
            flags |= EXPIRATION;
            writeDecimal(out, m.ttl());
        }
        if (messageId >= 0 && idProperty(out, messageId, limit)) {
            flags |= MESSAGE_ID;
        }
        if (creationTime >= 0) {
            long millis = b.getLong(creationTime + 1);
            if (millis != Long.MIN_VALUE) { // what the section index answers for none
                flags |= TIMESTAMP;
                out.writeLong(Math.floorDiv(millis, 1000));
            }
        }
        int body = s.bodyCode();
        if (body == SectionCode.DATA && s.bodySectionCount() == 1) {
            // a 0-9-1 message's type comes back (mc_amqpl's convert_from)
            if (basicType >= 0 && shortString(out, basicType, s.sectionEnd(SectionCode.MESSAGE_ANNOTATIONS))) {
                flags |= TYPE;
            }
        } else if (body >= 0) {
            flags |= TYPE;
            out.writeByte(AMQP_1_0_TYPE.length).writeBytes(AMQP_1_0_TYPE);
        }
        if (userId >= 0 && shortString(out, userId, limit)) {
            flags |= USER_ID;
        }
        if (groupId >= 0 && shortString(out, groupId, limit)) {
            flags |= APP_ID;
        }
        out.setShort(flagsAt, flags);
    }

    /**
     * The message annotations: {@code x-cc} as {@code CC}, {@code x-} ones as headers but those conversions add.
     *
     * @return where the value of {@code x-basic-type} is when it is a string, else -1
     */
    private int annotations(MessageSections s, ByteBuf out) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        int map = s.sectionValue(SectionCode.MESSAGE_ANNOTATIONS);
        if (map < 0 || b.getUnsignedByte(map) == FormatCode.NULL) {
            return -1;
        }
        int limit = s.sectionEnd(SectionCode.MESSAGE_ANNOTATIONS);
        int count = TypeReader.mapCount(b, map, limit);
        int at = TypeReader.compoundContentStart(b, map);
        int basicType = -1;
        for (int i = 0; i < count; i += 2) {
            int value = TypeReader.valueEnd(b, at, limit);
            int next = TypeReader.valueEnd(b, value, limit);
            int code = b.getUnsignedByte(at);
            if (isSymbol(code) || isString(code)) {
                int name = TypeReader.variableContentStart(b, at);
                int length = value - name;
                requireAscii(name, length);
                if (is(name, length, HeaderRoutes.X_CC)) {
                    header(out, CC, HeaderRoutes.CC, -1, 0, value, limit);
                } else if (is(name, length, Death.X_OPT_DEATHS)) {
                    throw DECLINED;
                } else if (is(name, length, Amqp091ToAmqp10.X_BASIC_TYPE)) {
                    basicType = isString(b.getUnsignedByte(value)) ? value : -1; // the last one, as in a map
                    check(value, limit);
                } else if (length >= 2 && b.getByte(name) == 'x' && b.getByte(name + 1) == '-' && length < 256
                        && !hasNul(name, length) && !internal(name, length)) {
                    header(out, hash(name, length), null, name, length, value, limit);
                } else {
                    check(value, limit);
                }
            } else if (code == FormatCode.ULONG0 || code == FormatCode.SMALLULONG || code == FormatCode.ULONG) {
                check(value, limit); // a numeric key, never a header
            } else {
                throw DECLINED;
            }
            at = next;
        }
        return basicType;
    }

    /** {@code mc_amqpl:is_internal_header/1}: what conversions add, not headers. */
    private boolean internal(int name, int length) {
        return length >= 8 && is(name, 8, "x-basic-") || is(name, length, Message.X_EXCHANGE)
            || is(name, length, Message.X_ROUTING_KEY) || is(name, length, Death.X_DEATH);
    }

    /** Every application property with a short-string name, as a header. */
    private void applicationProperties(MessageSections s, ByteBuf out) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        int map = s.sectionValue(SectionCode.APPLICATION_PROPERTIES);
        if (map < 0 || b.getUnsignedByte(map) == FormatCode.NULL) {
            return;
        }
        int limit = s.sectionEnd(SectionCode.APPLICATION_PROPERTIES);
        int count = TypeReader.mapCount(b, map, limit);
        int at = TypeReader.compoundContentStart(b, map);
        for (int i = 0; i < count; i += 2) {
            int value = TypeReader.valueEnd(b, at, limit);
            int next = TypeReader.valueEnd(b, value, limit);
            if (!isString(b.getUnsignedByte(at))) {
                throw DECLINED; // [3.2.5] keys are strings: the maps refuse the message
            }
            int name = TypeReader.variableContentStart(b, at);
            int length = value - name;
            requireAscii(name, length);
            if (length < 256 && !hasNul(name, length)) {
                header(out, hash(name, length), null, name, length, value, limit);
            } else {
                check(value, limit);
            }
            at = next;
        }
    }

    /**
     * One header: its name (a literal, or {@code length} bytes at {@code name}) and the value at {@code value}, left
     * out as a whole when the value has no 0-9-1 form.
     */
    private void header(ByteBuf out, long hash, String literal, int name, int length, int value, int limit)
            throws Declined, AmqpDecodeException {
        name(hash);
        int mark = out.writerIndex();
        if (literal != null) {
            writeAsciiShortString(out, literal);
        } else {
            out.writeByte(length).writeBytes(buf, name, length);
        }
        if (value(out, value, limit, true) != WRITTEN) {
            out.writerIndex(mark);
        }
    }

    /** A message-id or correlation-id the 0-9-1 property cannot hold: a binary, or a string too long. */
    private void idHeader(ByteBuf out, int id, int limit, long hash, String name)
            throws Declined, AmqpDecodeException {
        if (id < 0) {
            return;
        }
        int code = buf.getUnsignedByte(id);
        boolean binary = code == FormatCode.VBIN8 || code == FormatCode.VBIN32;
        if (binary || isString(code) && !isShortString(id, limit)) {
            name(hash);
            writeAsciiShortString(out, name);
            value(out, id, limit, true);
        }
    }

    /** A message-id or correlation-id as the 0-9-1 property: false when it went to a header instead. */
    private boolean idProperty(ByteBuf out, int id, int limit) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        switch (b.getUnsignedByte(id)) {
            case FormatCode.STR8, FormatCode.STR32:
                return shortString(out, id, limit);
            case FormatCode.ULONG0:
                out.writeByte(1).writeByte('0');
                return true;
            case FormatCode.SMALLULONG:
                writeDecimal(out, b.getUnsignedByte(id + 1));
                return true;
            case FormatCode.ULONG: {
                long value = b.getLong(id + 1);
                if (value < 0) {
                    writeAsciiShortString(out, Long.toUnsignedString(value));
                } else {
                    writeDecimal(out, value);
                }
                return true;
            }
            case FormatCode.UUID:
                out.writeByte(URN_UUID.length + 36).writeBytes(URN_UUID);
                writeUuid(out, b.getLong(id + 1), b.getLong(id + 9));
                return true;
            default:
                return false; // a binary: a header
        }
    }

    /**
     * Converts the value at {@code at} as {@code HeaderValues.normalise} and {@code FieldTable} do: its 0-9-1 field
     * value ({@link #WRITTEN}), nothing ({@link #LEFT_OUT}: decimals), or {@link #NO_091_TYPE} (a uuid, here or
     * nested: the whole header goes). What it wrote of a value it did not finish is left for the caller to drop.
     *
     * @param top a header's value (read as {@code ValueDecoder} reads it), not one inside a list or map (read by
     *        proton-j)
     */
    private int value(ByteBuf out, int at, int limit, boolean top) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        int code = b.getUnsignedByte(at);
        switch (code) {
            case FormatCode.NULL -> out.writeByte('V');
            case FormatCode.BOOLEAN_TRUE -> out.writeByte('t').writeByte(1);
            case FormatCode.BOOLEAN_FALSE -> out.writeByte('t').writeByte(0);
            case FormatCode.BOOLEAN -> {
                int value = b.getUnsignedByte(at + 1);
                if (value > 1) {
                    throw DECLINED;
                }
                out.writeByte('t').writeByte(value);
            }
            case FormatCode.UINT0, FormatCode.ULONG0 -> out.writeByte('l').writeLong(0);
            case FormatCode.SMALLUINT, FormatCode.SMALLULONG -> out.writeByte('l').writeLong(b.getUnsignedByte(at + 1));
            case FormatCode.UINT -> out.writeByte('l').writeLong(b.getUnsignedInt(at + 1));
            case FormatCode.ULONG, FormatCode.LONG -> out.writeByte('l').writeLong(b.getLong(at + 1));
            case FormatCode.SMALLLONG -> out.writeByte('l').writeLong(b.getByte(at + 1));
            case FormatCode.UBYTE -> out.writeByte('s').writeShort(b.getUnsignedByte(at + 1));
            case FormatCode.USHORT -> out.writeByte('I').writeInt(b.getUnsignedShort(at + 1));
            case FormatCode.BYTE -> out.writeByte('b').writeByte(b.getByte(at + 1));
            case FormatCode.SHORT -> out.writeByte('s').writeShort(b.getShort(at + 1));
            case FormatCode.SMALLINT -> out.writeByte('I').writeInt(b.getByte(at + 1));
            case FormatCode.INT -> out.writeByte('I').writeInt(b.getInt(at + 1));
            case FormatCode.FLOAT -> out.writeByte('f').writeFloat(b.getFloat(at + 1));
            case FormatCode.DOUBLE -> out.writeByte('d').writeDouble(b.getDouble(at + 1));
            case FormatCode.TIMESTAMP -> out.writeByte('T').writeLong(Math.floorDiv(b.getLong(at + 1), 1000));
            case FormatCode.CHAR -> {
                int c = b.getInt(at + 1) & 0xffff; // proton-j's char: the low 16 bits of the code point
                if (c >= 0x80) {
                    throw DECLINED;
                }
                out.writeByte('S').writeInt(1).writeByte(c);
            }
            case FormatCode.UUID -> {
                return NO_091_TYPE;
            }
            case FormatCode.DECIMAL32, FormatCode.DECIMAL64, FormatCode.DECIMAL128 -> {
                return LEFT_OUT;
            }
            case FormatCode.VBIN8, FormatCode.VBIN32, FormatCode.STR8, FormatCode.STR32, FormatCode.SYM8,
                 FormatCode.SYM32 -> {
                int start = TypeReader.variableContentStart(b, at);
                int length = TypeReader.valueEnd(b, at, limit) - start;
                if (code == FormatCode.VBIN8 || code == FormatCode.VBIN32) {
                    out.writeByte('x').writeInt(length).writeBytes(b, start, length);
                } else if (isAscii(start, length)) {
                    out.writeByte('S').writeInt(length).writeBytes(b, start, length);
                } else if (top) {
                    // decoded and encoded again as the maps do (invalid UTF-8 becomes replacement characters)
                    int lengthAt = out.writeByte('S').writerIndex();
                    out.writeInt(0);
                    out.setInt(lengthAt, ByteBufUtil.writeUtf8(out, b.toString(start, length,
                        StandardCharsets.UTF_8)));
                } else {
                    throw DECLINED;
                }
            }
            case FormatCode.LIST0, FormatCode.LIST8, FormatCode.LIST32, FormatCode.MAP8, FormatCode.MAP32 -> {
                if (top) {
                    TypeReader.validate(b, at, limit); // what proton-j is handed is checked whole first
                }
                return code == FormatCode.MAP8 || code == FormatCode.MAP32 ? map(out, at, limit) : list(out, at,
                    limit);
            }
            default -> throw DECLINED; // arrays, described values: the maps
        }
        return WRITTEN;
    }

    /** A list as an array of its elements' 0-9-1 values; elements without one are left out. */
    private int list(ByteBuf out, int at, int limit) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        int count = TypeReader.listCount(b, at, limit);
        int element = TypeReader.compoundContentStart(b, at);
        out.writeByte('A');
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        for (int i = 0; i < count; i++) {
            int next = TypeReader.valueEnd(b, element, limit);
            int mark = out.writerIndex();
            int result = value(out, element, limit, false);
            if (result == NO_091_TYPE) {
                return NO_091_TYPE;
            }
            if (result == LEFT_OUT) {
                out.writerIndex(mark);
            }
            element = next;
        }
        out.setInt(lengthAt, out.writerIndex() - lengthAt - 4);
        return WRITTEN;
    }

    /** A map as a table: string and symbol keys only, entries without a 0-9-1 value left out. */
    private int map(ByteBuf out, int at, int limit) throws Declined, AmqpDecodeException {
        ByteBuf b = buf;
        int count = TypeReader.mapCount(b, at, limit);
        int entry = TypeReader.compoundContentStart(b, at);
        int namesBefore = nameCount;
        out.writeByte('F');
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        for (int i = 0; i < count; i += 2) {
            int value = TypeReader.valueEnd(b, entry, limit);
            int next = TypeReader.valueEnd(b, value, limit);
            int code = b.getUnsignedByte(entry);
            if (isString(code) || isSymbol(code)) {
                int name = TypeReader.variableContentStart(b, entry);
                int length = value - name;
                requireAscii(name, length);
                if (length > 255) {
                    throw DECLINED; // the maps' encoder refuses the name: the conversion fails there
                }
                name(hash(name, length), namesBefore);
                int mark = out.writerIndex();
                out.writeByte(length).writeBytes(b, name, length);
                int result = value(out, value, limit, false);
                if (result == NO_091_TYPE) {
                    nameCount = namesBefore;
                    return NO_091_TYPE;
                }
                if (result == LEFT_OUT) {
                    out.writerIndex(mark);
                }
            } else {
                check(value, limit); // a key of another type: the entry is left out
            }
            entry = next;
        }
        nameCount = namesBefore;
        out.setInt(lengthAt, out.writerIndex() - lengthAt - 4);
        return WRITTEN;
    }

    /**
     * A value that is not converted but that the maps decode all the same: declines where they would fail.
     * Strings, binaries and fixed-width values (but a boolean's byte) are already bounded by {@code valueEnd}.
     */
    private void check(int at, int limit) throws Declined, AmqpDecodeException {
        int code = buf.getUnsignedByte(at);
        if (code == FormatCode.BOOLEAN && buf.getUnsignedByte(at + 1) > 1 || code == FormatCode.DESCRIBED
                || code == FormatCode.LIST0 || code >= FormatCode.LIST8) {
            throw DECLINED; // compound values are rare here: the maps check them
        }
    }

    /** Remembers a header name; declines on one seen before, or too many. */
    private void name(long hash) throws Declined {
        name(hash, 0);
    }

    /** Remembers a name of a table whose names start at {@code from}; declines on one seen before, or too many. */
    private void name(long hash, int from) throws Declined {
        if (nameCount == MAX_NAMES) {
            throw DECLINED;
        }
        for (int i = from; i < nameCount; i++) {
            if (names[i] == hash) {
                throw DECLINED;
            }
        }
        names[nameCount++] = hash;
    }

    /** A string or symbol property as a short string when it is one (false: left out); declines on non-ASCII. */
    private boolean shortString(ByteBuf out, int at, int limit) throws Declined, AmqpDecodeException {
        if (!isShortString(at, limit)) {
            return false;
        }
        int start = TypeReader.variableContentStart(buf, at);
        int length = TypeReader.valueEnd(buf, at, limit) - start;
        out.writeByte(length).writeBytes(buf, start, length);
        return true;
    }

    /** RabbitMQ's shortstr for an ASCII string, symbol or binary: under 256 bytes, no NUL; declines on non-ASCII. */
    private boolean isShortString(int at, int limit) throws Declined, AmqpDecodeException {
        int start = TypeReader.variableContentStart(buf, at);
        int length = TypeReader.valueEnd(buf, at, limit) - start;
        requireAscii(start, length);
        return length < 256 && !hasNul(start, length);
    }

    private void requireAscii(int start, int length) throws Declined {
        if (!isAscii(start, length)) {
            throw DECLINED;
        }
    }

    private boolean isAscii(int start, int length) {
        ByteBuf b = buf;
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            if ((b.getLong(start + i) & 0x8080_8080_8080_8080L) != 0) {
                return false;
            }
        }
        for (; i < length; i++) {
            if (b.getByte(start + i) < 0) {
                return false;
            }
        }
        return true;
    }

    private boolean hasNul(int start, int length) {
        return buf.indexOf(start, start + length, (byte) 0) >= 0;
    }

    /** True when the {@code length} bytes at {@code start} are {@code ascii}'s. */
    private boolean is(int start, int length, String ascii) {
        if (length != ascii.length()) {
            return false;
        }
        for (int i = length - 1; i >= 0; i--) {
            if (buf.getByte(start + i) != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Declines unless {@code ok}: a property of a type the maps' reader refuses. */
    private static int expect(int at, boolean ok) throws Declined {
        if (!ok) {
            throw DECLINED;
        }
        return at;
    }

    /** [3.2.11]-[3.2.15]: a message-id is an ulong, uuid, binary or string. */
    private static int id(int at, int code) throws Declined {
        return expect(at, switch (code) {
            case FormatCode.ULONG0, FormatCode.SMALLULONG, FormatCode.ULONG, FormatCode.UUID, FormatCode.VBIN8,
                 FormatCode.VBIN32, FormatCode.STR8, FormatCode.STR32 -> true;
            default -> false;
        });
    }

    private static boolean isString(int code) {
        return code == FormatCode.STR8 || code == FormatCode.STR32;
    }

    private static boolean isSymbol(int code) {
        return code == FormatCode.SYM8 || code == FormatCode.SYM32;
    }

    private static void writeAsciiShortString(ByteBuf out, String ascii) {
        out.writeByte(ascii.length()).writeCharSequence(ascii, StandardCharsets.US_ASCII);
    }

    /** A non-negative number's decimal digits as a short string. */
    private static void writeDecimal(ByteBuf out, long value) {
        int digits = 1;
        for (long v = value / 10; v > 0; v /= 10) {
            digits++;
        }
        out.writeByte(digits);
        int at = out.writerIndex();
        out.writeZero(digits);
        for (int i = at + digits - 1; i >= at; i--) {
            out.setByte(i, (int) ('0' + value % 10));
            value /= 10;
        }
    }

    /** {@code UUID.toString()}'s 36 characters: 8-4-4-4-12 lower-case hex digits. */
    private static void writeUuid(ByteBuf out, long high, long low) {
        hex(out, high >>> 32, 8);
        out.writeByte('-');
        hex(out, high >>> 16, 4);
        out.writeByte('-');
        hex(out, high, 4);
        out.writeByte('-');
        hex(out, low >>> 48, 4);
        out.writeByte('-');
        hex(out, low, 12);
    }

    private static void hex(ByteBuf out, long value, int digits) {
        for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
            out.writeByte(HEX[(int) (value >>> shift) & 0xf]);
        }
    }

    /** FNV-1a 64 of an ASCII name. */
    static long hash(String ascii) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < ascii.length(); i++) {
            h = (h ^ ascii.charAt(i)) * 0x100000001b3L;
        }
        return h;
    }

    private long hash(int start, int length) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < length; i++) {
            h = (h ^ buf.getByte(start + i)) * 0x100000001b3L;
        }
        return h;
    }
}
