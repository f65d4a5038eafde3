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
 * The flags word (version 2; bit 2 from version 5, bit 3 from version 6):
 *
 * <pre>
 *   15            8 7          4    3        2          1            0
 *   +--------------+------------+---------+---------+--------------+--------+
 *   | format tag   |  reserved  | returns | expires | redelivered  | durable|
 *   +--------------+------------+---------+---------+--------------+--------+
 * </pre>
 *
 * The CRC-32C covers bytes 0..28 and the body, so a torn record (cut short by a crash) or a corrupt one is
 * detected. The body of a {@link RecordType#PUBLISH} record is the exchange and routing key (each a 2-byte length
 * and UTF-8), then, only when the expires flag is set, when the message expires in its queue ({@code u64}
 * milliseconds since the epoch), then, only when the returns flag is set, the message's count of returns to its
 * queue ({@code u32}; without the flag it is its delivery count), followed by the message exactly as the client sent it, in the format the flags'
 * tag names ({@code MessageFormat.tag()}: 1 AMQP 1.0, the sections as received; 2 AMQP 0-9-1, {@code [u32 properties
 * length | properties | body]}, or from version 4, for a message the broker dead-lettered, {@code [u8 0x82 | death
 * history | u32 properties length | properties | body]}: see {@code Amqp091Message}). The body of an
 * {@link RecordType#ACKS} record is one or more ranges of acked sequences of its queue, {@link #ACK_RANGE_LENGTH}
 * bytes each, its sequence and delivery count fields 0; a {@link RecordType#DELIVERED} record's likewise, of
 * messages delivered before a clean stop:
 *
 * <pre>
 *   0                        8                12
 *   +------------------------+----------------+
 *   |     first sequence     | count (&ge; 1) |  … repeated
 *   +------------------------+----------------+
 * </pre>
 *
 * A {@link RecordType#REQUEUE} record with the returns flag has the count of returns as its body ({@code u32});
 * other record types have an empty body ({@link RecordType#CLEAN_STOP} and {@link RecordType#STARTED} also queue id
 * and sequence 0); every type but a publish has tag 0.
 *
 * <p>Versions: 1 (before message formats) had no tag, so its publish records are AMQP 1.0; 2 added the tag; 3
 * added {@link RecordType#ACKS}, with the layout unchanged otherwise; 4 added the 0-9-1 stored form with a death
 * history (its first byte has the high bit set, which a version 1 form's length never has); 5 added a publish's
 * expiry and the types {@link RecordType#DELIVERED}, {@link RecordType#CLEAN_STOP} and {@link RecordType#STARTED};
 * 6 the returns flag (a quorum queue's count of returns, RabbitMQ's {@code acquired_count}). Recovery reads all six. Each bump makes a broker from before it refuse the journal by its version, rather than
 * misread it (0-9-1 messages as AMQP 1.0) or stop at an unknown type.
 */
public final class RecordDescriptor {
    /** Bumped whenever the layout changes; recovery refuses records of a version it does not know. */
    public static final byte VERSION = 6;
    /** The version before message formats: publish records are AMQP 1.0 and the high flag byte is 0. */
    public static final byte VERSION_1 = 1;
    /** The version before {@link RecordType#ACKS}: acks are one {@link RecordType#ACK} record each. */
    public static final byte VERSION_2 = 2;
    /**
     * The first version whose AMQP 0-9-1 stored form keeps a dead-lettered message's history beside it; before it,
     * the broker kept that history in the message's {@code x-death} header alone.
     */
    public static final byte VERSION_4 = 4;
    /** The first version with a publish's expiry and the clean-stop types. */
    public static final byte VERSION_5 = 5;
    /** The first version with the returns flag. */
    public static final byte VERSION_6 = 6;

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
    /** Flag of a publish record (version 5): its body holds when the message expires, after the routing key. */
    public static final int FLAG_EXPIRES = 4;
    /**
     * Flag of a publish or requeue record (version 6): it holds the message's count of returns, which differs from
     * its delivery count (a quorum queue's).
     */
    public static final int FLAG_RETURNS = 8;
    /** The flags' high byte: a publish record's message format tag. */
    public static final int FORMAT_SHIFT = 8;
    public static final int FLAGS_MASK = 0xff;
    /** The tag of AMQP 1.0, what every version 1 publish record holds. */
    public static final int FORMAT_AMQP_1_0 = 1;

    private RecordDescriptor() {
    }
}
