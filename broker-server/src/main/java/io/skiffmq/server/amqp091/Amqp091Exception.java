package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.BrokerException;

/**
 * A request refused with an AMQP 0-9-1 reply code. A soft code ({@code 403}–{@code 406}) closes the channel the
 * method came on, a hard one the connection ({@link ReplyCode#isConnectionError()}). The reply text is RabbitMQ's
 * shape: the code's name, a dash, then why ({@code NOT_FOUND - no queue 'q' in vhost '/'}).
 */
final class Amqp091Exception extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ReplyCode code;
    private final int classId;
    private final int methodId;

    private Amqp091Exception(ReplyCode code, int classId, int methodId, String message) {
        super(message, null, false, false);
        this.code = code;
        this.classId = classId;
        this.methodId = methodId;
    }

    /** @param cause the method refused, or null when no single method is to blame */
    static Amqp091Exception of(ReplyCode code, Method cause, String format, Object... args) {
        return new Amqp091Exception(code, cause == null ? 0 : cause.classId(), cause == null ? 0 : cause.methodId(),
            args.length == 0 ? format : String.format(format, args));
    }

    /** The core's refusal, in 0-9-1 terms. */
    static Amqp091Exception of(BrokerException e, Method cause) {
        ReplyCode code = switch (e.kind()) {
            case NOT_FOUND -> ReplyCode.NOT_FOUND;
            case ACCESS_REFUSED -> ReplyCode.ACCESS_REFUSED;
            case RESOURCE_LOCKED -> ReplyCode.RESOURCE_LOCKED;
            case PRECONDITION_FAILED, INVALID, RESOURCE_LIMIT -> ReplyCode.PRECONDITION_FAILED;
            case NOT_IMPLEMENTED -> ReplyCode.NOT_IMPLEMENTED;
            case TIMEOUT -> ReplyCode.INTERNAL_ERROR; // rabbit_channel's answer to a Khepri timeout
        };
        return of(code, cause, "%s", e.getMessage());
    }

    ReplyCode code() {
        return code;
    }

    int classId() {
        return classId;
    }

    int methodId() {
        return methodId;
    }

    /** The {@code reply-text}: at most 255 bytes, as a short string must be. */
    String replyText() {
        String text = code.text() + " - " + getMessage();
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (bytes.length <= 255) {
            return text;
        }
        // cut on a character boundary
        int end = 255;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(bytes, 0, end, java.nio.charset.StandardCharsets.UTF_8);
    }
}
