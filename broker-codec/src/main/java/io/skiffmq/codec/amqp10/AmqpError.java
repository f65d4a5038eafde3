package io.skiffmq.codec.amqp10;

import org.apache.qpid.proton.amqp.Symbol;

/**
 * Every AMQP 1.0 error condition the broker sends, each symbol defined once ([2.8.15], [2.8.16], [2.8.17],
 * [2.8.18], [4.5.8], [5.3.3.6]). Code elsewhere refers to these constants, never to {@code Symbol.valueOf("amqp:…")}.
 */
public enum AmqpError {
    // [2.8.15] amqp-error
    INTERNAL_ERROR("amqp:internal-error"),
    NOT_FOUND("amqp:not-found"),
    UNAUTHORIZED_ACCESS("amqp:unauthorized-access"),
    DECODE_ERROR("amqp:decode-error"),
    RESOURCE_LIMIT_EXCEEDED("amqp:resource-limit-exceeded"),
    NOT_ALLOWED("amqp:not-allowed"),
    INVALID_FIELD("amqp:invalid-field"),
    NOT_IMPLEMENTED("amqp:not-implemented"),
    RESOURCE_LOCKED("amqp:resource-locked"),
    PRECONDITION_FAILED("amqp:precondition-failed"),
    RESOURCE_DELETED("amqp:resource-deleted"),
    ILLEGAL_STATE("amqp:illegal-state"),
    FRAME_SIZE_TOO_SMALL("amqp:frame-size-too-small"),
    // [2.8.16] connection-error
    CONNECTION_FORCED("amqp:connection:forced"),
    FRAMING_ERROR("amqp:connection:framing-error"),
    CONNECTION_REDIRECT("amqp:connection:redirect"),
    // [2.8.17] session-error
    WINDOW_VIOLATION("amqp:session:window-violation"),
    ERRANT_LINK("amqp:session:errant-link"),
    HANDLE_IN_USE("amqp:session:handle-in-use"),
    UNATTACHED_HANDLE("amqp:session:unattached-handle"),
    // [2.8.18] link-error
    DETACH_FORCED("amqp:link:detach-forced"),
    TRANSFER_LIMIT_EXCEEDED("amqp:link:transfer-limit-exceeded"),
    MESSAGE_SIZE_EXCEEDED("amqp:link:message-size-exceeded"),
    LINK_REDIRECT("amqp:link:redirect"),
    STOLEN("amqp:link:stolen"),
    // [4.5.8] transaction-error
    TRANSACTION_UNKNOWN_ID("amqp:transaction:unknown-id"),
    TRANSACTION_ROLLBACK("amqp:transaction:rollback"),
    TRANSACTION_TIMEOUT("amqp:transaction:timeout");

    private final Symbol symbol;

    AmqpError(String symbol) {
        this.symbol = Symbol.valueOf(symbol);
    }

    /** The condition as sent in an {@code error} record. */
    public Symbol symbol() {
        return symbol;
    }

    @Override
    public String toString() {
        return symbol.toString();
    }
}
