package io.skiffmq.codec.amqp091;

/**
 * The reply codes of AMQP 0-9-1 [1.2 constants], each with the reply text RabbitMQ sends before its explanation
 * ({@code NOT_FOUND - no queue 'q' in vhost '/'}). Part of the protocol: the codes cannot change. A channel error
 * ({@link #isConnectionError()} false) closes the channel with {@code channel.close}; every other error closes
 * the connection with {@code connection.close}. 200 and 311..313 are not errors: 200 is a clean close, 311..313
 * come back in {@code basic.return}.
 */
public enum ReplyCode {
    REPLY_SUCCESS(200, false),
    CONTENT_TOO_LARGE(311, false),
    NO_ROUTE(312, false),
    NO_CONSUMERS(313, false),
    CONNECTION_FORCED(320, true),
    INVALID_PATH(402, true),
    ACCESS_REFUSED(403, false),
    NOT_FOUND(404, false),
    RESOURCE_LOCKED(405, false),
    PRECONDITION_FAILED(406, false),
    FRAME_ERROR(501, true),
    SYNTAX_ERROR(502, true),
    COMMAND_INVALID(503, true),
    CHANNEL_ERROR(504, true),
    UNEXPECTED_FRAME(505, true),
    RESOURCE_ERROR(506, true),
    NOT_ALLOWED(530, true),
    NOT_IMPLEMENTED(540, true),
    INTERNAL_ERROR(541, true);

    private static final ReplyCode[] BY_CODE = new ReplyCode[542];

    static {
        for (ReplyCode c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;
    private final boolean connectionError;

    ReplyCode(int code, boolean connectionError) {
        this.code = code;
        this.connectionError = connectionError;
    }

    /** The number sent as {@code reply-code}. */
    public int code() {
        return code;
    }

    /** The text RabbitMQ puts first in {@code reply-text}: the constant's name ({@code NOT_FOUND}). */
    public String text() {
        return name();
    }

    /** True for a hard error (the spec's class {@code hard-error}), which closes the whole connection. */
    public boolean isConnectionError() {
        return connectionError;
    }

    /** The reply code for {@code code}, or null for a number the spec does not define. */
    public static ReplyCode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
