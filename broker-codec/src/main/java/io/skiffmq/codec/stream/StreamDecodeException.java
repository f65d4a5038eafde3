package io.skiffmq.codec.stream;

/**
 * Bytes that are not a valid stream protocol frame or command. Checked, so no decoding path can forget it; the
 * server closes the connection with {@link #responseCode()}. Stackless: peers can make us throw these at will.
 */
public final class StreamDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final DecodeFailure failure;

    public StreamDecodeException(DecodeFailure failure, String message) {
        super(message, null, false, false);
        this.failure = failure;
    }

    /** Builds the exception with a {@link String#format} message. */
    public static StreamDecodeException of(DecodeFailure failure, String format, Object... args) {
        return new StreamDecodeException(failure, String.format(format, args));
    }

    public DecodeFailure failure() {
        return failure;
    }

    /** The closing code: 0x0e frame too large, otherwise 0x0d unknown frame. */
    public ResponseCode responseCode() {
        return failure.responseCode();
    }

    /** What went wrong, without the failure's name: the closing reason's detail. */
    public String detail() {
        return super.getMessage();
    }

    @Override
    public String getMessage() {
        return failure + ": " + super.getMessage();
    }
}
