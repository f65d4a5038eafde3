package io.skiffmq.codec.amqp091;

/**
 * Why bytes from an AMQP 0-9-1 peer could not be decoded, each with the reply code the connection is closed
 * with. The codes follow RabbitMQ's reader where it answers ({@code rabbit_reader}, {@code rabbit_framing}); tests
 * assert on these values, so they are part of the codec's contract.
 */
public enum DecodeFailure {
    /** A frame header announcing more than frame-max allows [4.2.3]. */
    FRAME_TOO_LARGE(ReplyCode.FRAME_ERROR),
    /** The octet after the payload is not {@code 0xCE} [4.2.3]: the stream is out of sync. */
    BAD_FRAME_END(ReplyCode.FRAME_ERROR),
    /** A frame type other than method, header, body and heartbeat. */
    UNKNOWN_FRAME_TYPE(ReplyCode.FRAME_ERROR),
    /**
     * A frame too short for its type (a method frame under 4 bytes, a content header under 12) or a heartbeat
     * with a payload: RabbitMQ's {@code analyze_frame} finds no match and answers {@code frame_error}.
     */
    MALFORMED_FRAME(ReplyCode.FRAME_ERROR),
    /** A heartbeat on a channel other than 0 [4.2.7]; RabbitMQ answers {@code unexpected_frame}. */
    HEARTBEAT_ON_CHANNEL(ReplyCode.UNEXPECTED_FRAME),
    /**
     * Method arguments cut short, or bytes left over after the last one. RabbitMQ's generated decoder matches
     * the whole argument list at once and answers {@code frame_error} ("cannot decode").
     */
    BAD_ARGUMENTS(ReplyCode.FRAME_ERROR),
    /** A value that is malformed in itself: a field table or content properties that do not parse. */
    BAD_VALUE(ReplyCode.SYNTAX_ERROR),
    /**
     * A class or method id this broker does not know. RabbitMQ exits the connection process without a reply
     * ({@code unknown_method_id}); we close properly with the spec's code for functionality not implemented.
     */
    UNKNOWN_METHOD(ReplyCode.NOT_IMPLEMENTED);

    private final ReplyCode replyCode;

    DecodeFailure(ReplyCode replyCode) {
        this.replyCode = replyCode;
    }

    /** The code the connection is closed with. */
    public ReplyCode replyCode() {
        return replyCode;
    }
}
