package io.skiffmq.server.amqp10;

/**
 * Where a link handle stands in the detach exchange [2.6.6]. Legal transitions:
 * <ul>
 *   <li>{@code ATTACHED → DETACHED}: the peer detached and we replied;</li>
 *   <li>{@code ATTACHED → DETACH_SENT}: we detached (an error, or a refused attach, which is attached and detached
 *       at once); the handle stays taken until the peer's detach;</li>
 *   <li>{@code DETACH_SENT → DETACHED}: the peer's detach arrived; the handle is free again.</li>
 * </ul>
 * Any other transition throws {@link IllegalStateException}.
 */
enum LinkState {
    ATTACHED,
    DETACH_SENT,
    DETACHED;

    /** The state after moving to {@code next}; throws if the move is not listed above. */
    LinkState to(LinkState next) {
        boolean legal = switch (this) {
            case ATTACHED -> next == DETACH_SENT || next == DETACHED;
            case DETACH_SENT -> next == DETACHED;
            case DETACHED -> false;
        };
        if (!legal) {
            throw new IllegalStateException("link " + this + " -> " + next);
        }
        return next;
    }
}
