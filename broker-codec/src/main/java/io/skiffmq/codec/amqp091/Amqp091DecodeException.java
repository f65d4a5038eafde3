package io.skiffmq.codec.amqp091;

/**
 * Bytes that are not valid AMQP 0-9-1 content (content-header properties, field tables). Checked, so no decoding
 * path can forget it; the server will turn it into a connection error ({@code 502 syntax-error} or
 * {@code 505 unexpected-frame}). Stackless: peers can make us throw these at will.
 */
public final class Amqp091DecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    public Amqp091DecodeException(String message) {
        super(message, null, false, false);
    }

    static Amqp091DecodeException of(String format, Object... args) {
        return new Amqp091DecodeException(String.format(format, args));
    }
}
