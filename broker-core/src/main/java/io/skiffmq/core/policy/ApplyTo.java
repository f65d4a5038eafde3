package io.skiffmq.core.policy;

import io.skiffmq.core.queue.QueueType;

/** What a policy applies to ({@code apply-to}), as RabbitMQ 4 names it. */
public enum ApplyTo {
    ALL("all"), QUEUES("queues"), CLASSIC_QUEUES("classic_queues"), QUORUM_QUEUES("quorum_queues"),
    STREAMS("streams"), EXCHANGES("exchanges");

    private final String value;

    ApplyTo(String value) {
        this.value = value;
    }

    public String value() {
        return value;
    }

    /**
     * The value named so.
     *
     * @throws IllegalArgumentException in RabbitMQ 4's words ({@code rabbit_policy:apply_to_validation/2}), double
     *         space included
     */
    public static ApplyTo of(String value) {
        for (ApplyTo a : values()) {
            if (a.value.equals(value)) {
                return a;
            }
        }
        throw new IllegalArgumentException("apply-to '" + value + "' unrecognised; should be one of: 'queues', "
            + "'classic_queues',  'quorum_queues', 'streams', 'exchanges', or 'all'");
    }

    /** A queue of {@code type} is in scope. */
    public boolean queues(QueueType type) {
        return switch (this) {
            case ALL, QUEUES -> true;
            case CLASSIC_QUEUES -> type == QueueType.CLASSIC;
            case QUORUM_QUEUES -> type == QueueType.QUORUM;
            case STREAMS -> type == QueueType.STREAM;
            case EXCHANGES -> false;
        };
    }

    /** Exchanges are in scope. */
    public boolean exchanges() {
        return this == ALL || this == EXCHANGES;
    }
}
