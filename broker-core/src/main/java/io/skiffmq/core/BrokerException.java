package io.skiffmq.core;

/**
 * A request the broker refuses, with why: the protocols map {@link Kind} to their own codes (AMQP 1.0 conditions,
 * HTTP statuses over the management node, 0-9-1 reply codes).
 */
public final class BrokerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        /** No such queue, exchange or binding. */
        NOT_FOUND,
        /** Declared again with different properties. */
        PRECONDITION_FAILED,
        /** Reserved names and the default exchange cannot be changed. */
        ACCESS_REFUSED,
        /** Another connection's exclusive queue. */
        RESOURCE_LOCKED,
        /** A value the broker does not accept. */
        INVALID,
        /** A limit would be passed (a virtual host's {@code max-queues}). */
        RESOURCE_LIMIT,
        /** Something RabbitMQ has that SkiffMQ does not implement yet (quorum and stream queues). */
        NOT_IMPLEMENTED,
        /** In a cluster, a definition change no majority committed in time; its outcome is unknown. */
        TIMEOUT
    }

    private final Kind kind;

    public BrokerException(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
