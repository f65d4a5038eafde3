package io.skiffmq.server;

/** A link of a session, either way. Owned by the connection's event loop. */
interface Link {
    long handle();

    /** Handles a {@code flow} naming this link. */
    void onFlow(io.skiffmq.codec.amqp10.FlowPerformative flow);

    /**
     * The link ends (detach, end, or the connection going away): gives back what it holds. Idempotent.
     *
     * @param closed the peer detached with {@code closed=true}: the link's durable state goes too [2.6.6]
     */
    void close(boolean closed);
}
