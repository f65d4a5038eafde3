package io.skiffmq.core.message;

/**
 * The wire format a message is held in: the format its publisher used. The {@link #tag()} is written into
 * journal records, so it never changes once released; a new format takes a new tag.
 */
public enum MessageFormat {
    AMQP_1_0(1),
    AMQP_0_9_1(2);

    private final byte tag;

    MessageFormat(int tag) {
        this.tag = (byte) tag;
    }

    /** The stable byte that names this format on disk. */
    public byte tag() {
        return tag;
    }

    /** The format of {@code tag}, or null for a tag this broker does not know. */
    public static MessageFormat ofTag(int tag) {
        return switch (tag) {
            case 1 -> AMQP_1_0;
            case 2 -> AMQP_0_9_1;
            default -> null;
        };
    }
}
