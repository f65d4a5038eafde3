package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.amqp10.DecodeFailure.SECTION_ORDER;
import static io.skiffmq.codec.amqp10.DecodeFailure.UNEXPECTED_TYPE;
import static io.skiffmq.codec.amqp10.DecodeFailure.UNKNOWN_DESCRIPTOR;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;

/**
 * A message as the bytes a client sent, with an index of where each section starts and ends [3.2]. Building
 * the index ({@link #scan}) reads only descriptors and sizes; fields are decoded when first asked for, one
 * section or one field at a time, and bodies ({@code data}, {@code amqp-sequence}, {@code amqp-value}) are
 * never decoded at all.
 *
 * <pre>
 *  start                                                                                         end
 *  | header | delivery-ann. | message-ann. | properties | application-prop. | body…body | footer |
 *  |&lt;-------- annotations (replaced on delivery) -------&gt;|&lt;-- bare message: sent on as received --&gt;|
 * </pre>
 *
 * Every section is optional; present ones tile {@code [start, end)} exactly. Sections appear in the order
 * above and each at most once, except that the body is one {@code amqp-value}, or one or more consecutive
 * {@code data}, or one or more consecutive {@code amqp-sequence} sections.
 *
 * <p>The view reads the buffer given to {@link #scan} and never changes its indexes or reference count: it is
 * valid while that buffer is. Unchanged after {@link #scan} (it keeps no lazy caches), so threads that got it
 * safely published may read it at the same time.
 */
public final class MessageSections {
    private static final int ABSENT = -1;

    private final ByteBuf buf;
    private final int end;

    // start of each section (its 0x00 constructor). Kept per message, so nothing that can be derived is stored
    // (the index is 48 bytes with compressed references): a value's start is found past the descriptor
    // ({@link #valueOf}), a section's end is the next one's start ({@link #sectionEnd}), the message's start is its
    // first section's ({@link #start}), the body's kind is read from its first descriptor ({@link #bodyCode}), its
    // sections are counted when asked ({@link #bodySectionCount}), and the header's fields are decoded when asked for
    // (a few bytes at most)
    private int headerStart = ABSENT;
    private int deliveryAnnotationsStart = ABSENT;
    private int messageAnnotationsStart = ABSENT;
    private int propertiesStart = ABSENT;
    private int applicationPropertiesStart = ABSENT;
    private int bodyStart = ABSENT;
    private int footerStart = ABSENT;

    private MessageSections(ByteBuf buf, int end) {
        this.buf = buf;
        this.end = end;
    }

    /**
     * Indexes the message in {@code message}'s readable bytes. Reads descriptors and sizes only.
     *
     * @param message the encoded message; neither its indexes nor its reference count change, and the
     *        returned view reads it until the caller releases it
     * @throws AmqpDecodeException when the bytes are not a sequence of well-formed sections in [3.2]'s order
     */
    public static MessageSections scan(ByteBuf message) throws AmqpDecodeException {
        MessageSections sections = new MessageSections(message, message.writerIndex());
        sections.index(message.readerIndex());
        return sections;
    }

    private void index(int start) throws AmqpDecodeException {
        int position = start;
        int lastRank = -1;
        int bodyCode = ABSENT;
        while (position < end) {
            int sectionStart = position;
            long descriptor = Descriptor.code(buf, position, end, SectionCode.SYMBOL_TABLE);
            if (descriptor < SectionCode.HEADER || descriptor > SectionCode.FOOTER) {
                throw AmqpDecodeException.of(UNKNOWN_DESCRIPTOR, "section at %d has an unknown descriptor",
                    sectionStart);
            }
            int code = (int) descriptor;
            int value = Descriptor.end(buf, position, end);
            position = TypeReader.valueEnd(buf, value, end);
            checkValueType(code, value);

            int rank = SectionCode.rank(code);
            if (rank < lastRank || rank == lastRank && (rank != 5 || code != bodyCode || code == SectionCode.AMQP_VALUE)) {
                throw AmqpDecodeException.of(SECTION_ORDER, "%s at %d after %s", SectionCode.symbol(code),
                    sectionStart, lastRank == 5 ? SectionCode.symbol(bodyCode) : "a later section");
            }
            lastRank = rank;
            switch (code) {
                case SectionCode.HEADER -> headerStart = sectionStart;
                case SectionCode.DELIVERY_ANNOTATIONS -> deliveryAnnotationsStart = sectionStart;
                case SectionCode.MESSAGE_ANNOTATIONS -> messageAnnotationsStart = sectionStart;
                case SectionCode.PROPERTIES -> propertiesStart = sectionStart;
                case SectionCode.APPLICATION_PROPERTIES -> applicationPropertiesStart = sectionStart;
                case SectionCode.FOOTER -> footerStart = sectionStart;
                default -> {
                    if (bodyStart == ABSENT) {
                        bodyStart = sectionStart;
                        bodyCode = code;
                    }
                }
            }
        }
    }

    /** [3.2]: header, properties and amqp-sequence are lists; annotations and footer maps; data binary. */
    private void checkValueType(int code, int value) throws AmqpDecodeException {
        int type = buf.getUnsignedByte(value);
        if (type == FormatCode.NULL || code == SectionCode.AMQP_VALUE) {
            return;
        }
        boolean ok = switch (code) {
            case SectionCode.HEADER, SectionCode.PROPERTIES, SectionCode.AMQP_SEQUENCE -> FormatCode.isList(type);
            case SectionCode.DATA -> type == FormatCode.VBIN8 || type == FormatCode.VBIN32;
            default -> FormatCode.isMap(type);
        };
        if (!ok) {
            throw AmqpDecodeException.of(UNEXPECTED_TYPE, "%s at %d holds a value of type 0x%02x",
                SectionCode.symbol(code), value, type);
        }
    }

    // ---- layout -------------------------------------------------------------------------------------------

    /** The buffer this view reads. */
    public ByteBuf buffer() {
        return buf;
    }

    /**
     * Index of the first byte of the message in {@link #buffer()}: where its first section starts, since present
     * sections tile it ({@link #end()} for a message of no section).
     */
    public int start() {
        return headerStart != ABSENT ? headerStart : sectionEnd(SectionCode.HEADER);
    }

    /** Index just past the last byte of the message in {@link #buffer()}. */
    public int end() {
        return end;
    }

    /**
     * Index where the bare message starts (properties, application-properties, body), which is where the
     * bytes that go to consumers unchanged start; they run to {@link #end()} and include the footer.
     */
    public int bareMessageStart() {
        if (propertiesStart != ABSENT) {
            return propertiesStart;
        }
        if (applicationPropertiesStart != ABSENT) {
            return applicationPropertiesStart;
        }
        if (bodyStart != ABSENT) {
            return bodyStart;
        }
        return footerStart != ABSENT ? footerStart : end;
    }

    /** True when the message carries section {@code code} ({@link SectionCode}); for body codes, its kind. */
    public boolean has(int code) {
        return switch (code) {
            case SectionCode.HEADER -> headerStart != ABSENT;
            case SectionCode.DELIVERY_ANNOTATIONS -> deliveryAnnotationsStart != ABSENT;
            case SectionCode.MESSAGE_ANNOTATIONS -> messageAnnotationsStart != ABSENT;
            case SectionCode.PROPERTIES -> propertiesStart != ABSENT;
            case SectionCode.APPLICATION_PROPERTIES -> applicationPropertiesStart != ABSENT;
            case SectionCode.FOOTER -> footerStart != ABSENT;
            default -> bodyStart != ABSENT && bodyCode() == code;
        };
    }

    /**
     * Index of section {@code code}'s value (just past its descriptor), -1 when the section is absent; for a body
     * code, the first body section's, when the body is of that kind. What a reader that walks a section in place
     * starts from (the value may be an encoded null).
     */
    public int sectionValue(int code) {
        return switch (code) {
            case SectionCode.HEADER -> valueOf(headerStart);
            case SectionCode.DELIVERY_ANNOTATIONS -> valueOf(deliveryAnnotationsStart);
            case SectionCode.MESSAGE_ANNOTATIONS -> valueOf(messageAnnotationsStart);
            case SectionCode.PROPERTIES -> valueOf(propertiesStart);
            case SectionCode.APPLICATION_PROPERTIES -> valueOf(applicationPropertiesStart);
            case SectionCode.FOOTER -> valueOf(footerStart);
            default -> bodyStart == ABSENT || bodyCode() != code ? ABSENT : valueOf(bodyStart);
        };
    }

    /** Where the value of the section starting at {@code sectionStart} starts (past its descriptor); -1 for -1. */
    private int valueOf(int sectionStart) {
        if (sectionStart == ABSENT) {
            return ABSENT;
        }
        try {
            return Descriptor.end(buf, sectionStart, end);
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException("bytes changed after they were scanned", e);
        }
    }

    /** Index where the body starts (its first section's descriptor), -1 when there is no body. */
    public int bodyStart() {
        return bodyStart;
    }

    /**
     * Index just past the present section {@code code} (past the last body section, for the body's code): where the
     * next present section starts, or the message's end, since present sections tile it. Meaningless for an absent
     * section. Derived rather than stored: one array fewer per message.
     */
    public int sectionEnd(int code) {
        int rank = SectionCode.rank(code);
        if (rank < 1 && deliveryAnnotationsStart != ABSENT) {
            return deliveryAnnotationsStart;
        }
        if (rank < 2 && messageAnnotationsStart != ABSENT) {
            return messageAnnotationsStart;
        }
        if (rank < 3 && propertiesStart != ABSENT) {
            return propertiesStart;
        }
        if (rank < 4 && applicationPropertiesStart != ABSENT) {
            return applicationPropertiesStart;
        }
        if (rank < 5 && bodyStart != ABSENT) {
            return bodyStart;
        }
        if (rank < 6 && footerStart != ABSENT) {
            return footerStart;
        }
        return end;
    }

    /** Start of the message-annotations section, or -1. */
    int messageAnnotationsStart() {
        return messageAnnotationsStart;
    }

    /** Index of the message-annotations map (or null), -1 when there is no such section. */
    int messageAnnotationsValue() {
        return valueOf(messageAnnotationsStart);
    }

    int messageAnnotationsEnd() {
        return sectionEnd(SectionCode.MESSAGE_ANNOTATIONS);
    }

    /** Kind of the body ({@link SectionCode#DATA}, {@code AMQP_SEQUENCE} or {@code AMQP_VALUE}), -1 if none. */
    public int bodyCode() {
        if (bodyStart == ABSENT) {
            return ABSENT;
        }
        try {
            return (int) Descriptor.code(buf, bodyStart, end, SectionCode.SYMBOL_TABLE);
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException("bytes changed after they were scanned", e);
        }
    }

    /**
     * How many body sections there are (several {@code data} or {@code amqp-sequence} sections are allowed), counted
     * on each call: only conversions ask, and one field fewer per message.
     */
    public int bodySectionCount() {
        if (bodyStart == ABSENT) {
            return 0;
        }
        int bodyEnd = sectionEnd(SectionCode.DATA);
        int count = 0;
        try {
            for (int position = bodyStart; position < bodyEnd; count++) {
                position = TypeReader.valueEnd(buf, Descriptor.end(buf, position, bodyEnd), bodyEnd);
            }
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException("bytes changed after they were scanned", e);
        }
        return count;
    }

    /**
     * Every section in order, with offsets relative to {@link #start()}. Allocates; for tests, management and
     * diagnostics, not the delivery path.
     */
    public List<Section> sections() {
        List<Section> sections = new ArrayList<>();
        int start = start();
        try {
            int position = start;
            while (position < end) {
                int code = (int) Descriptor.code(buf, position, end, SectionCode.SYMBOL_TABLE);
                int value = Descriptor.end(buf, position, end);
                int sectionEnd = TypeReader.valueEnd(buf, value, end);
                sections.add(new Section(code, position - start, value - start, sectionEnd - start));
                position = sectionEnd;
            }
        } catch (AmqpDecodeException e) {
            throw new IllegalStateException("bytes changed after they were scanned", e);
        }
        return sections;
    }

    /** One section: its code and where it starts, where its value starts and where it ends. */
    public record Section(int code, int offset, int valueOffset, int endOffset) {
    }

    // ---- header [3.2.1] -----------------------------------------------------------------------------------

    private static final int DURABLE = 0;
    private static final int PRIORITY = 1;
    private static final int TTL = 2;
    private static final int FIRST_ACQUIRER = 3;
    private static final int DELIVERY_COUNT = 4;
    /** Not a field: durable, priority and ttl at once ({@link #headerBasics}). */
    private static final int BASICS = -1;

    /**
     * Header field {@code wanted} (booleans as 0 or 1), or its default when the header or the field is absent. The
     * whole header is decoded on each call, so a malformed field fails whichever is asked for; it is a few bytes, and
     * not caching it keeps five fields out of every message.
     */
    private long headerField(int wanted) throws AmqpDecodeException {
        boolean durable = false;
        int priority = 4;
        long ttl = -1;
        boolean firstAcquirer = false;
        long deliveryCount = 0;
        int value = valueOf(headerStart);
        if (value != ABSENT && buf.getUnsignedByte(value) != FormatCode.NULL) {
            int limit = sectionEnd(SectionCode.HEADER);
            int count = TypeReader.listCount(buf, value, limit);
            int position = TypeReader.compoundContentStart(buf, value);
            for (int field = 0; field < count; field++) {
                switch (field) {
                    case DURABLE -> durable = TypeReader.readBooleanOr(buf, position, limit, false);
                    case PRIORITY -> {
                        int p = TypeReader.readUByteOrNull(buf, position, limit);
                        priority = p < 0 ? 4 : p;
                    }
                    case TTL -> ttl = TypeReader.readUIntOrNull(buf, position, limit);
                    case FIRST_ACQUIRER -> firstAcquirer = TypeReader.readBooleanOr(buf, position, limit, false);
                    case DELIVERY_COUNT -> {
                        long c = TypeReader.readUIntOrNull(buf, position, limit);
                        deliveryCount = c < 0 ? 0 : c;
                    }
                    default -> {
                        // fields a later version may add: skipped
                    }
                }
                position = TypeReader.valueEnd(buf, position, limit);
            }
        }
        return switch (wanted) {
            case BASICS -> (durable ? 1L : 0L) | (long) priority << 1 | (ttl + 1) << 9;
            case DURABLE -> durable ? 1 : 0;
            case PRIORITY -> priority;
            case TTL -> ttl;
            case FIRST_ACQUIRER -> firstAcquirer ? 1 : 0;
            default -> deliveryCount;
        };
    }

    /**
     * The header's {@code durable}, {@code priority} and {@code ttl} from one decoding of the header, in a long (no
     * object per message), read with {@link #durable(long)}, {@link #priority(long)} and {@link #ttl(long)}: what
     * every message received needs. Asked one by one, the header was decoded three times per durable message, 5 % of
     * the broker's CPU on the AMQP 1.0 durable path.
     */
    public long headerBasics() throws AmqpDecodeException {
        return headerField(BASICS);
    }

    public static boolean durable(long basics) {
        return (basics & 1) != 0;
    }

    public static int priority(long basics) {
        return (int) (basics >>> 1) & 0xff;
    }

    public static long ttl(long basics) {
        return (basics >>> 9) - 1;
    }

    /**
     * The header's {@code durable} field; false when the header or the field is absent, as [3.2.1] defines.
     * The broker's own default for messages without a header is a policy decision made above the codec.
     */
    public boolean durable() throws AmqpDecodeException {
        return headerField(DURABLE) != 0;
    }

    /** The header's {@code priority}; 4 when absent. */
    public int priority() throws AmqpDecodeException {
        return (int) headerField(PRIORITY);
    }

    /** The header's {@code ttl} in milliseconds; -1 when absent. */
    public long ttl() throws AmqpDecodeException {
        return headerField(TTL);
    }

    public boolean firstAcquirer() throws AmqpDecodeException {
        return headerField(FIRST_ACQUIRER) != 0;
    }

    public long deliveryCount() throws AmqpDecodeException {
        return headerField(DELIVERY_COUNT);
    }

    // ---- properties [3.2.4] -------------------------------------------------------------------------------

    /** Index of field {@code field} of the properties list, or -1 when the section or the field is absent. */
    private int propertyField(int field) throws AmqpDecodeException {
        int value = valueOf(propertiesStart);
        return value == ABSENT || buf.getUnsignedByte(value) == FormatCode.NULL ? ABSENT
            : PropertyFields.position(buf, value, sectionEnd(SectionCode.PROPERTIES), field);
    }

    private String stringProperty(int field) throws AmqpDecodeException {
        int index = propertyField(field);
        return index == ABSENT ? null : TypeReader.readStringOrNull(buf, index, sectionEnd(SectionCode.PROPERTIES));
    }

    private Object messageIdProperty(int field) throws AmqpDecodeException {
        int index = propertyField(field);
        return index == ABSENT ? null : PropertyFields.messageId(buf, index, sectionEnd(SectionCode.PROPERTIES));
    }

    private Symbol symbolProperty(int field) throws AmqpDecodeException {
        int index = propertyField(field);
        String symbol = index == ABSENT ? null
            : TypeReader.readSymbolOrNull(buf, index, sectionEnd(SectionCode.PROPERTIES));
        return symbol == null ? null : Symbol.valueOf(symbol);
    }

    private long timestampProperty(int field) throws AmqpDecodeException {
        int index = propertyField(field);
        return index == ABSENT ? Long.MIN_VALUE
            : TypeReader.readTimestampOrNull(buf, index, sectionEnd(SectionCode.PROPERTIES));
    }

    /** {@code message-id}: an {@code UnsignedLong}, {@code UUID}, {@code Binary} or {@code String}, or null. */
    public Object messageId() throws AmqpDecodeException {
        return messageIdProperty(0);
    }

    public Binary userId() throws AmqpDecodeException {
        int index = propertyField(1);
        return index == ABSENT ? null : PropertyFields.binary(buf, index, sectionEnd(SectionCode.PROPERTIES));
    }

    public String to() throws AmqpDecodeException {
        return stringProperty(2);
    }

    public String subject() throws AmqpDecodeException {
        return stringProperty(3);
    }

    public String replyTo() throws AmqpDecodeException {
        return stringProperty(4);
    }

    public Object correlationId() throws AmqpDecodeException {
        return messageIdProperty(5);
    }

    public Symbol contentType() throws AmqpDecodeException {
        return symbolProperty(6);
    }

    public Symbol contentEncoding() throws AmqpDecodeException {
        return symbolProperty(7);
    }

    /** Milliseconds since the epoch; {@link Long#MIN_VALUE} when absent. */
    public long absoluteExpiryTime() throws AmqpDecodeException {
        return timestampProperty(8);
    }

    /** Milliseconds since the epoch; {@link Long#MIN_VALUE} when absent. */
    public long creationTime() throws AmqpDecodeException {
        return timestampProperty(9);
    }

    public String groupId() throws AmqpDecodeException {
        return stringProperty(10);
    }

    /** -1 when absent. */
    public long groupSequence() throws AmqpDecodeException {
        int index = propertyField(11);
        return index == ABSENT ? -1 : TypeReader.readUIntOrNull(buf, index, sectionEnd(SectionCode.PROPERTIES));
    }

    public String replyToGroupId() throws AmqpDecodeException {
        return stringProperty(12);
    }

    // ---- maps: annotations [3.2.2, 3.2.3], application-properties [3.2.5], footer [3.2.10] -------------------

    /**
     * The value of the application property named {@code key} (compared as UTF-8 bytes, without allocating),
     * decoded alone; null when absent or null.
     */
    public Object applicationProperty(CharSequence key) throws AmqpDecodeException {
        return lookup(applicationPropertiesStart, SectionCode.APPLICATION_PROPERTIES, key, FormatCode.STR8,
            FormatCode.STR32);
    }

    /** The message annotation under the symbol {@code key}, decoded alone; null when absent or null. */
    public Object messageAnnotation(CharSequence key) throws AmqpDecodeException {
        return lookup(messageAnnotationsStart, SectionCode.MESSAGE_ANNOTATIONS, key, FormatCode.SYM8,
            FormatCode.SYM32);
    }

    /**
     * Where the value of the message annotation under the symbol {@code key} starts, -1 when absent: for a reader that
     * reads it in place ({@link TypeReader}, {@link ValueDecoder}). Found as {@link #messageAnnotation} finds it.
     */
    public int messageAnnotationIndex(CharSequence key) throws AmqpDecodeException {
        int value = valueOf(messageAnnotationsStart);
        return value == ABSENT || buf.getUnsignedByte(value) == FormatCode.NULL
            ? ABSENT : SectionMaps.find(buf, value, sectionEnd(SectionCode.MESSAGE_ANNOTATIONS), key,
                FormatCode.SYM8, FormatCode.SYM32);
    }

    private Object lookup(int sectionStart, int code, CharSequence key, int code8, int code32)
            throws AmqpDecodeException {
        int value = valueOf(sectionStart);
        return value == ABSENT || buf.getUnsignedByte(value) == FormatCode.NULL ? null
            : SectionMaps.lookup(buf, value, sectionEnd(code), key, code8, code32);
    }

    /** All application properties, decoded; keys must be strings [3.2.5]. Empty when absent. */
    public Map<String, Object> applicationProperties() throws AmqpDecodeException {
        return decodeMap(applicationPropertiesStart, SectionCode.APPLICATION_PROPERTIES, String.class);
    }

    /** All message annotations, decoded (keys are symbols or ulongs [3.2.10]). Empty when absent. */
    public Map<Object, Object> messageAnnotations() throws AmqpDecodeException {
        return decodeMap(messageAnnotationsStart, SectionCode.MESSAGE_ANNOTATIONS, Object.class);
    }

    /** All delivery annotations, decoded. Empty when absent. */
    public Map<Object, Object> deliveryAnnotations() throws AmqpDecodeException {
        return decodeMap(deliveryAnnotationsStart, SectionCode.DELIVERY_ANNOTATIONS, Object.class);
    }

    /** All footer annotations, decoded. Empty when absent. */
    public Map<Object, Object> footer() throws AmqpDecodeException {
        return decodeMap(footerStart, SectionCode.FOOTER, Object.class);
    }

    private <K> Map<K, Object> decodeMap(int sectionStart, int code, Class<K> keyType)
            throws AmqpDecodeException {
        int value = valueOf(sectionStart);
        return value == ABSENT || buf.getUnsignedByte(value) == FormatCode.NULL ? Collections.emptyMap()
            : SectionMaps.decode(buf, value, sectionEnd(code), keyType);
    }
}
