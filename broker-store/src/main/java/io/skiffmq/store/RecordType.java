package io.skiffmq.store;

/** What a journal record says happened to a message of a queue. The codes are on disk: never renumber them. */
public enum RecordType {
    /** The message entered the queue; the body holds it. */
    PUBLISH(1),
    /** A consumer accepted (or rejected) it: it is gone. */
    ACK(2),
    /** It went back to the queue (released, modified): the delivery count and redelivered flag say how. */
    REQUEUE(3),
    /** Its time-to-live ran out. */
    EXPIRE(4),
    /** The queue was deleted or purged: every earlier record of it is dead. */
    QUEUE_DELETED(5),
    /**
     * Like {@link #ACK}, for many messages of one queue at once: the body lists ranges of sequences (see
     * {@link RecordDescriptor}). Version 3 and later.
     */
    ACKS(6);

    private final byte code;

    RecordType(int code) {
        this.code = (byte) code;
    }

    public byte code() {
        return code;
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
