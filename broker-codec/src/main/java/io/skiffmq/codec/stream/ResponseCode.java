package io.skiffmq.codec.stream;

/**
 * The response codes of the stream protocol (PROTOCOL.adoc "Response Codes" and {@code rabbit_stream.hrl}, which
 * adds 0x14 and 0x15). Part of the protocol: the codes cannot change. They answer requests, fill publish errors,
 * metadata entries and metadata updates, and are the closing code a server sends with {@code close}.
 */
public enum ResponseCode {
    OK(0x01),
    STREAM_DOES_NOT_EXIST(0x02),
    SUBSCRIPTION_ID_ALREADY_EXISTS(0x03),
    SUBSCRIPTION_ID_DOES_NOT_EXIST(0x04),
    STREAM_ALREADY_EXISTS(0x05),
    STREAM_NOT_AVAILABLE(0x06),
    SASL_MECHANISM_NOT_SUPPORTED(0x07),
    AUTHENTICATION_FAILURE(0x08),
    SASL_ERROR(0x09),
    SASL_CHALLENGE(0x0a),
    SASL_AUTHENTICATION_FAILURE_LOOPBACK(0x0b),
    VIRTUAL_HOST_ACCESS_FAILURE(0x0c),
    UNKNOWN_FRAME(0x0d),
    FRAME_TOO_LARGE(0x0e),
    INTERNAL_ERROR(0x0f),
    ACCESS_REFUSED(0x10),
    PRECONDITION_FAILED(0x11),
    PUBLISHER_DOES_NOT_EXIST(0x12),
    NO_OFFSET(0x13),
    /** Re-authentication (SASL authenticate after open) with another mechanism. */
    SASL_CANNOT_CHANGE_MECHANISM(0x14),
    /** Re-authentication as another user. */
    SASL_CANNOT_CHANGE_USERNAME(0x15);

    private static final ResponseCode[] BY_CODE = new ResponseCode[0x16];

    static {
        for (ResponseCode c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;

    ResponseCode(int code) {
        this.code = code;
    }

    /** The uint16 on the wire. */
    public int code() {
        return code;
    }

    /** The response code for {@code code}, or null for a number the protocol does not define. */
    public static ResponseCode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
