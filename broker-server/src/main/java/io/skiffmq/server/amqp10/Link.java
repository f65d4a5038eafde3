package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.FlowPerformative;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;

/** A link of a session, either way. Owned by the connection's event loop. */
interface Link {
    /**
     * Our half of an attach [2.7.3]: the peer's name, handle, source and target, our role opposite theirs, and
     * receivers settling first.
     */
    static Attach reply(Attach attach,
            SenderSettleMode sndSettleMode) {
        Attach reply = new Attach();
        reply.setName(attach.getName());
        reply.setHandle(attach.getHandle());
        reply.setRole(attach.getRole() == Role.SENDER
            ? Role.RECEIVER : Role.SENDER);
        reply.setSndSettleMode(sndSettleMode);
        reply.setRcvSettleMode(ReceiverSettleMode.FIRST);
        reply.setSource(attach.getSource());
        reply.setTarget(attach.getTarget());
        reply.setProperties(attach.getProperties());
        return reply;
    }

    long handle();

    /** True once {@link #close} has run: nothing more is sent on the link. */
    boolean isClosed();

    /** Handles a {@code flow} naming this link. */
    void onFlow(FlowPerformative flow);

    /**
     * The link ends (detach, end, or the connection going away): gives back what it holds. Idempotent.
     *
     * @param closed the peer detached with {@code closed=true}: the link's durable state goes too [2.6.6]
     */
    void close(boolean closed);

    /**
     * The link ends with its session or connection, together with the others there: a link that consumes from a
     * queue leaves it through {@code release}, so the queue takes back the unsettled deliveries of all those links
     * at once ({@link LinkRelease}); any other link just closes. Idempotent, as {@link #close} is.
     */
    default void leave(LinkRelease release) {
        close(false);
    }
}
