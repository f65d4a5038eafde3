package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;

/**
 * A protocol error and its scope [2.8.15-18]: a connection error closes the connection, a session error ends the
 * session, a link error detaches the link, each with {@link #condition()} and a readable description. Stackless:
 * peers can cause these at will. Thrown on the connection's event loop and caught by the handler there.
 */
final class AmqpException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    enum Scope { CONNECTION, SESSION, LINK }

    private final Scope scope;
    private final transient AmqpError condition;
    private final long handle;

    private AmqpException(Scope scope, AmqpError condition, long handle, String description) {
        this(scope, condition, handle, description, null);
    }

    /** @param cause a broker fault's exception, kept for its stack; null for a peer's error */
    private AmqpException(Scope scope, AmqpError condition, long handle, String description, Throwable cause) {
        super(description, cause, false, false);
        this.scope = scope;
        this.condition = condition;
        this.handle = handle;
    }

    static AmqpException connectionError(AmqpError condition, String format, Object... args) {
        return new AmqpException(Scope.CONNECTION, condition, -1, String.format(format, args));
    }

    static AmqpException sessionError(AmqpError condition, String format, Object... args) {
        return new AmqpException(Scope.SESSION, condition, -1, String.format(format, args));
    }

    static AmqpException linkError(long handle, AmqpError condition, String format, Object... args) {
        return new AmqpException(Scope.LINK, condition, handle, String.format(format, args));
    }

    /** The link error that answers a refusal from the core. */
    static AmqpException linkError(long handle, io.skiffmq.core.BrokerException e) {
        return linkError(handle, conditionOf(e), "%s", e.getMessage());
    }

    /** The AMQP condition for a refusal from the core, as RabbitMQ 4 answers the same refusal. */
    static AmqpError conditionOf(io.skiffmq.core.BrokerException e) {
        return switch (e.kind()) {
            case NOT_FOUND -> AmqpError.NOT_FOUND;
            case PRECONDITION_FAILED -> AmqpError.PRECONDITION_FAILED;
            case ACCESS_REFUSED -> AmqpError.UNAUTHORIZED_ACCESS;
            case RESOURCE_LOCKED -> AmqpError.RESOURCE_LOCKED;
            case INVALID -> AmqpError.INVALID_FIELD;
            case NOT_IMPLEMENTED -> AmqpError.NOT_IMPLEMENTED;
            case RESOURCE_LIMIT -> AmqpError.RESOURCE_LIMIT_EXCEEDED;
            case TIMEOUT -> AmqpError.INTERNAL_ERROR;
        };
    }

    /** The error condition for a failure the core reported asynchronously (a refusal, or a broker fault). */
    static org.apache.qpid.proton.amqp.transport.ErrorCondition conditionOf(Throwable failure) {
        Throwable cause = causeOf(failure);
        return new org.apache.qpid.proton.amqp.transport.ErrorCondition(amqpErrorOf(cause).symbol(), cause.getMessage());
    }

    /** The link error for a future that failed before the link was attached. */
    static AmqpException linkError(long handle, java.util.concurrent.CompletableFuture<?> failed) {
        Throwable cause = causeOf(failed.handle((value, failure) -> failure).join());
        AmqpError condition = amqpErrorOf(cause);
        return new AmqpException(Scope.LINK, condition, handle, cause.getMessage(),
            condition == AmqpError.INTERNAL_ERROR ? cause : null);
    }

    private static Throwable causeOf(Throwable failure) {
        return failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
            ? failure.getCause() : failure;
    }

    private static AmqpError amqpErrorOf(Throwable cause) {
        return cause instanceof io.skiffmq.core.BrokerException b ? conditionOf(b) : AmqpError.INTERNAL_ERROR;
    }

    Scope scope() {
        return scope;
    }

    AmqpError condition() {
        return condition;
    }

    /** The link's handle, for link errors. */
    long handle() {
        return handle;
    }
}
