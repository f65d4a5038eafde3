package io.skiffmq.codec.stream;

/**
 * Why bytes from a stream protocol peer could not be decoded, each with the code RabbitMQ closes the connection
 * with ({@code rabbit_stream_reader}): {@code frame_too_large} for an oversized frame, and {@code unknown} for every
 * frame {@code rabbit_stream_core:parse_command} cannot match, which RabbitMQ answers with close 0x0d "unknown
 * frame". Tests assert on these values, so they are part of the codec's contract.
 */
public enum DecodeFailure {
    /** A frame whose size field exceeds frame-max: checked on the 4-byte size, before the body arrives. */
    FRAME_TOO_LARGE(ResponseCode.FRAME_TOO_LARGE),
    /** A frame of fewer than 4 bytes: no room for key and version. */
    FRAME_TOO_SMALL(ResponseCode.UNKNOWN_FRAME),
    /**
     * A key the protocol does not define, a version RabbitMQ does not parse, or a command the sending peer never
     * sends (a client sending deliver, a server sending publish).
     */
    UNKNOWN_COMMAND(ResponseCode.UNKNOWN_FRAME),
    /** Fields cut short by the end of the frame, or bytes left after the last field. */
    BAD_FIELDS(ResponseCode.UNKNOWN_FRAME),
    /**
     * A field malformed in itself: a negative length, a count that cannot fit in the bytes left, an unknown offset
     * type or response code, a boolean other than 0 or 1, a publish whose entries do not match its count.
     */
    BAD_VALUE(ResponseCode.UNKNOWN_FRAME);

    private final ResponseCode responseCode;

    DecodeFailure(ResponseCode responseCode) {
        this.responseCode = responseCode;
    }

    /** The code of the {@code close} the server sends before closing the connection. */
    public ResponseCode responseCode() {
        return responseCode;
    }
}
