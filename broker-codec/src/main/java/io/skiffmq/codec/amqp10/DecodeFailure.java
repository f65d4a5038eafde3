package io.skiffmq.codec.amqp10;

/**
 * Why bytes from a peer could not be decoded. Each failure belongs to one AMQP condition: problems with the
 * frame layer are {@link AmqpError#FRAMING_ERROR}, problems with what is inside a frame are
 * {@link AmqpError#DECODE_ERROR}. Tests assert on these values, so they are part of the codec's contract.
 */
public enum DecodeFailure {
    /** The 8 bytes before any frame are not {@code AMQP} followed by a protocol id and version we know. */
    BAD_PROTOCOL_HEADER(AmqpError.FRAMING_ERROR),
    /** A well-formed protocol header for a protocol or version this connection does not accept here. */
    UNSUPPORTED_PROTOCOL(AmqpError.FRAMING_ERROR),
    /** Frame size below 8 or above the negotiated max-frame-size [2.3.1]. */
    FRAME_SIZE(AmqpError.FRAMING_ERROR),
    /** Data offset below 2 or pointing past the end of the frame [2.3.1]. */
    BAD_DOFF(AmqpError.FRAMING_ERROR),
    /** A frame type other than AMQP (0) or SASL (1), or one not valid in the current protocol phase. */
    BAD_FRAME_TYPE(AmqpError.FRAMING_ERROR),

    /** A value's fixed-width bytes or its size field run past the end of the available bytes. */
    TRUNCATED(AmqpError.DECODE_ERROR),
    /** A declared size is larger than the bytes that hold it, or too small for its own count field. */
    BAD_SIZE(AmqpError.DECODE_ERROR),
    /** An element count that cannot fit in the declared size, or an odd count for a map. */
    BAD_COUNT(AmqpError.DECODE_ERROR),
    /** A format code that AMQP 1.0 does not define [1.6]. */
    UNKNOWN_FORMAT_CODE(AmqpError.DECODE_ERROR),
    /** Described values nested deeper than the decoder allows. */
    NESTING_TOO_DEEP(AmqpError.DECODE_ERROR),
    /** A value of a type the field or section does not allow. */
    UNEXPECTED_TYPE(AmqpError.DECODE_ERROR),
    /** A descriptor that names no message section, performative or type this decoder knows. */
    UNKNOWN_DESCRIPTOR(AmqpError.DECODE_ERROR),
    /** Message sections out of the order [3.2] requires, or a section that may appear once appearing twice. */
    SECTION_ORDER(AmqpError.DECODE_ERROR),
    /** A mandatory field is missing or null. */
    MISSING_FIELD(AmqpError.DECODE_ERROR),
    /** Bytes left over after a value that should have filled its container exactly. */
    TRAILING_BYTES(AmqpError.DECODE_ERROR),
    /** Anything the decoder of proton-j rejected that has no more specific reason above. */
    MALFORMED(AmqpError.DECODE_ERROR);

    private final AmqpError condition;

    DecodeFailure(AmqpError condition) {
        this.condition = condition;
    }

    /** The condition the connection is closed with. */
    public AmqpError condition() {
        return condition;
    }
}
