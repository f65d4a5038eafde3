package io.skiffmq.core.stream;

/**
 * A super stream that cannot be made or found, with RabbitMQ's reason ({@code rabbit_stream_manager}'s error
 * tuples): the stream protocol answers each with its own response code, the HTTP API with 400 and the reason.
 */
public final class SuperStreamException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Reason {
        /** Bad names, counts or arguments ({@code validation_failed}): the stream protocol's precondition failed. */
        VALIDATION_FAILED("validation_failed"),
        /** An exchange or queue of a name it needs exists ({@code reference_already_exists}). */
        REFERENCE_ALREADY_EXISTS("reference_already_exists"),
        /** No such super stream, or a partition missing ({@code stream_not_found}). */
        STREAM_NOT_FOUND("stream_not_found");

        private final String erlang;

        Reason(String erlang) {
            this.erlang = erlang;
        }

        /** RabbitMQ's name for it. */
        public String erlang() {
            return erlang;
        }
    }

    private final Reason reason;

    public SuperStreamException(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /** As RabbitMQ's HTTP API words it ({@code ~p} of the error tuple): {@code {reason,"message"}}. */
    public String erlangTerm() {
        return "{" + reason.erlang + ",\"" + getMessage().replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    }
}
