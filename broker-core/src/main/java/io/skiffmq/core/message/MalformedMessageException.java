package io.skiffmq.core.message;

/**
 * Bytes that do not hold a message of the format they claim: a damaged stored message, or a publisher's
 * message the codec refused. The cause is the codec's exception when there is one.
 */
public final class MalformedMessageException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedMessageException(String message, Throwable cause) {
        super(message, cause);
    }
}
