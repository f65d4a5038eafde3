package io.skiffmq.codec.amqp10;

/**
 * Bytes from a peer that are not valid AMQP 1.0. Checked, so no decoding path can forget it; the server turns
 * it into a close with {@link #condition()}. Stackless: peers can make us throw these at will, and the
 * message (failure, offset) says all there is to say.
 */
public final class AmqpDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final DecodeFailure failure;

    public AmqpDecodeException(DecodeFailure failure, String message) {
        super(message, null, false, false);
        this.failure = failure;
    }

    /** Builds the exception with a {@link String#format} message. */
    public static AmqpDecodeException of(DecodeFailure failure, String format, Object... args) {
        return new AmqpDecodeException(failure, String.format(format, args));
    }

    public DecodeFailure failure() {
        return failure;
    }

    public AmqpError condition() {
        return failure.condition();
    }

    @Override
    public String getMessage() {
        return failure + ": " + super.getMessage();
    }
}
