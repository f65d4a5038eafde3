package io.skiffmq.codec.amqp091;

/**
 * Bytes that are not valid AMQP 0-9-1: frames, method arguments, content-header properties, field tables.
 * Checked, so no decoding path can forget it; the server closes the connection with {@link #replyCode()}.
 * Stackless: peers can make us throw these at will.
 */
public final class Amqp091DecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final DecodeFailure failure;

    /** A malformed value ({@link DecodeFailure#BAD_VALUE}, 502 syntax-error). */
    public Amqp091DecodeException(String message) {
        this(DecodeFailure.BAD_VALUE, message);
    }

    public Amqp091DecodeException(DecodeFailure failure, String message) {
        super(message, null, false, false);
        this.failure = failure;
    }

    static Amqp091DecodeException of(String format, Object... args) {
        return new Amqp091DecodeException(String.format(format, args));
    }

    /** Builds the exception with a {@link String#format} message. */
    public static Amqp091DecodeException of(DecodeFailure failure, String format, Object... args) {
        return new Amqp091DecodeException(failure, String.format(format, args));
    }

    public DecodeFailure failure() {
        return failure;
    }

    public ReplyCode replyCode() {
        return failure.replyCode();
    }

    /**
     * What went wrong, without the failure's name: the reply text's part after the code (frame-level failures start
     * {@code type N, } as RabbitMQ's do).
     */
    public String detail() {
        return super.getMessage();
    }

    @Override
    public String getMessage() {
        return failure + ": " + super.getMessage();
    }
}
