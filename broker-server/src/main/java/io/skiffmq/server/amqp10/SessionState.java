package io.skiffmq.server.amqp10;

/**
 * Where a session stands in the end exchange [2.5.5]. Legal transitions:
 * <ul>
 *   <li>{@code MAPPED → UNMAPPED}: the peer ended and we replied;</li>
 *   <li>{@code MAPPED → END_SENT}: we ended with an error; the channel stays taken, and frames on it are ignored,
 *       until the peer's end;</li>
 *   <li>{@code END_SENT → UNMAPPED}: the peer's end arrived; the channel is free again.</li>
 * </ul>
 * Any other transition throws {@link IllegalStateException}.
 */
enum SessionState {
    MAPPED,
    END_SENT,
    UNMAPPED;

    /** The state after moving to {@code next}; throws if the move is not listed above. */
    SessionState to(SessionState next) {
        boolean legal = switch (this) {
            case MAPPED -> next == END_SENT || next == UNMAPPED;
            case END_SENT -> next == UNMAPPED;
            case UNMAPPED -> false;
        };
        if (!legal) {
            throw new IllegalStateException("session " + this + " -> " + next);
        }
        return next;
    }
}
