package io.skiffmq.store;

/**
 * The layout of one journal record (big-endian):
 *
 * <pre>
 *   0        1        2                4                        12                       20
 *   +--------+--------+----------------+------------------------+------------------------+
 *   | version|  type  |     flags      |        queue id        |        sequence        |
 *   +--------+--------+----------------+------------------------+------------------------+
 *   20                24               28               32
 *   +----------------+----------------+----------------+----------------------------------+
 *   | delivery count |  body length   |  CRC-32C       | body (length bytes)              |
 *   +----------------+----------------+----------------+----------------------------------+
 * </pre>
 *
 * The flags word (version 2):
 *
 * <pre>
 *   15            8 7            2   1            0
 *   +--------------+--------------+--------------+--------+
 *   | format tag   |   reserved   | redelivered  | durable|
 *   +--------------+--------------+--------------+--------+
 * </pre>
 *
 * The CRC-32C covers bytes 0..28 and the body, so a torn record (cut short by a crash) or a corrupt one is
 * detected. The body of a {@link RecordType#PUBLISH} record is the exchange and routing key (each a 2-byte length
 * and UTF-8) followed by the message exactly as the client sent it, in the format the flags' tag names
 * ({@code MessageFormat.tag()}: 1 AMQP 1.0, the sections as received; 2 AMQP 0-9-1, {@code [u32 properties
 * length | properties | body]}, or from version 4, for a message the broker dead-lettered, {@code [u8 0x82 | death
 * history | u32 properties length | properties | body]}: see {@code Amqp091Message}). The body of an {@link RecordType#ACKS} record is one or more ranges of acked
 * sequences of its queue, {@link #ACK_RANGE_LENGTH} bytes each, its sequence and delivery count fields 0:
 *
 * <pre>
 *   0                        8                12
 *   +------------------------+----------------+
 *   |     first sequence     | count (&ge; 1) |  … repeated
 *   +------------------------+----------------+
 * </pre>
 *
 * Other record types have an empty body; every type but a publish has tag 0.
 *
 * <p>Versions: 1 (before message formats) had no tag, so its publish records are AMQP 1.0; 2 added the tag; 3
 * added {@link RecordType#ACKS}, with the layout unchanged otherwise; 4 added the 0-9-1 stored form with a death
 * history (its first byte has the high bit set, which a version 1 form's length never has). Recovery reads all
 * four. Each bump makes
 * a broker from before it refuse the journal by its version, rather than misread it (0-9-1 messages as AMQP 1.0)
 * or stop at an unknown type.
 */
public final class RecordDescriptor {
    /** Bumped whenever the layout changes; recovery refuses records of a version it does not know. */
    public static final byte VERSION = 4;
    /** The version before message formats: publish records are AMQP 1.0 and the high flag byte is 0. */
    public static final byte VERSION_1 = 1;
    /** The version before {@link RecordType#ACKS}: acks are one {@link RecordType#ACK} record each. */
    public static final byte VERSION_2 = 2;
    /**
     * The first version whose AMQP 0-9-1 stored form keeps a dead-lettered message's history beside it; before it,
     * the broker kept that history in the message's {@code x-death} header alone.
     */
    public static final byte VERSION_4 = 4;

    public static final int VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int QUEUE_ID_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 12;
    public static final int DELIVERY_COUNT_OFFSET = 20;
    public static final int LENGTH_OFFSET = 24;
    public static final int CRC_OFFSET = 28;
    public static final int HEADER_LENGTH = 32;
    /** One range of an {@link RecordType#ACKS} body: a u64 first sequence and a u32 count. */
    public static final int ACK_RANGE_LENGTH = 12;

    /** Flag: the message is durable. */
    public static final int FLAG_DURABLE = 1;
    /** Flag: the message was delivered before (its first-acquirer is false). */
    public static final int FLAG_REDELIVERED = 2;
    /** The flags' high byte: a publish record's message format tag. */
    public static final int FORMAT_SHIFT = 8;
    public static final int FLAGS_MASK = 0xff;
    /** The tag of AMQP 1.0, what every version 1 publish record holds. */
    public static final int FORMAT_AMQP_1_0 = 1;

    private RecordDescriptor() {
    }
}
