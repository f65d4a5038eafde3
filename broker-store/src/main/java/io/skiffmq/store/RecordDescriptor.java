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
 * The CRC-32C covers bytes 0..28 and the body, so a torn record (cut short by a crash) or a corrupt one is
 * detected. The body of a {@link RecordType#PUBLISH} record is the exchange and routing key (each a 2-byte length
 * and UTF-8) followed by the message exactly as the client sent it (message-annotations and bare message); other
 * record types have an empty body.
 */
public final class RecordDescriptor {
    /** Bumped whenever the layout changes; recovery refuses records of a version it does not know. */
    public static final byte VERSION = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int QUEUE_ID_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 12;
    public static final int DELIVERY_COUNT_OFFSET = 20;
    public static final int LENGTH_OFFSET = 24;
    public static final int CRC_OFFSET = 28;
    public static final int HEADER_LENGTH = 32;

    /** Flag: the message is durable. */
    public static final int FLAG_DURABLE = 1;
    /** Flag: the message was delivered before (its first-acquirer is false). */
    public static final int FLAG_REDELIVERED = 2;

    private RecordDescriptor() {
    }
}
