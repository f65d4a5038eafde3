package io.skiffmq.store;

/**
 * What a journal record says happened to a message of a queue, or to the broker. The codes are on disk: never
 * renumber them. A type is valid from the record version that added it ({@link #since}).
 */
public enum RecordType {
    /** The message entered the queue; the body holds it. */
    PUBLISH(1, 1),
    /** A consumer accepted (or rejected) it: it is gone. */
    ACK(2, 1),
    /** It went back to the queue (released, modified): the delivery count and redelivered flag say how. */
    REQUEUE(3, 1),
    /** Its time-to-live ran out. */
    EXPIRE(4, 1),
    /** The queue was deleted or purged: every earlier record of it is dead. */
    QUEUE_DELETED(5, 1),
    /**
     * Like {@link #ACK}, for many messages of one queue at once: the body lists ranges of sequences (see
     * {@link RecordDescriptor}). Version 3 and later.
     */
    ACKS(6, 3),
    /**
     * Written as the broker stops cleanly: these messages of the queue, still in it, had been delivered before (a
     * restart marks them redelivered and no others); the body lists ranges as {@link #ACKS} does. Version 5.
     */
    DELIVERED(7, 5),
    /**
     * The broker stopped cleanly: every durable queue wrote its {@link #DELIVERED} records before this one, and
     * nothing follows it. A journal whose last record is this one was stopped cleanly. Version 5.
     */
    CLEAN_STOP(8, 5),
    /**
     * A broker started on a journal that ends with a {@link #CLEAN_STOP}, which no longer holds: from here on,
     * messages may be delivered without a record, so a crash must not find the journal clean. Version 5.
     */
    STARTED(9, 5),
    /**
     * The message died in a quorum queue that dead-letters at least once: it stays, not delivered, until its
     * dead-letter queues confirm it; the body is one byte, why it died ({@code DeadLetters.Reason} ordinal). Version 6.
     */
    DEAD_LETTERING(10, 6);

    private final byte code;
    private final int since;

    RecordType(int code, int since) {
        this.code = (byte) code;
        this.since = since;
    }

    public byte code() {
        return code;
    }

    /** The record version that added this type: a record of an older version and this type is damaged. */
    public int since() {
        return since;
    }

    /** The type of an on-disk code, or null for a code this version does not know. */
    public static RecordType of(byte code) {
        for (RecordType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return null;
    }
}
