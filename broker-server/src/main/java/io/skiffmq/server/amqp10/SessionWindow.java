package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.SerialNumber;

/**
 * A session's transfer ids and windows both ways [2.5.6], and the delivery ids of what it sends. Sequence numbers
 * are serial numbers ({@link SerialNumber}). Our outgoing window is always the largest there is: only the peer's
 * incoming window holds our transfers back. Owned by the connection's event loop.
 */
final class SessionWindow {
    static final long MAX_WINDOW = 0xffffffffL;

    private final long grantedWindow;
    private long nextIncomingId;
    private long incomingWindow;
    private long nextOutgoingId;
    private long remoteIncomingWindow;
    private long nextDeliveryId;

    SessionWindow(long grantedWindow) {
        this.grantedWindow = grantedWindow;
    }

    /** The peer's begin: its first transfer-id and its incoming window; ours opens at the configured size. */
    void begin(long peerNextOutgoingId, long peerIncomingWindow) {
        nextIncomingId = peerNextOutgoingId;
        remoteIncomingWindow = peerIncomingWindow;
        incomingWindow = grantedWindow;
    }

    long nextOutgoingId() {
        return nextOutgoingId;
    }

    long incomingWindow() {
        return incomingWindow;
    }

    /** Counts an incoming transfer frame; a frame beyond our window is a session error. */
    void transferReceived() {
        if (incomingWindow <= 0) {
            throw AmqpException.sessionError(AmqpError.WINDOW_VIOLATION, "transfer beyond the incoming window");
        }
        incomingWindow--;
        nextIncomingId = SerialNumber.add(nextIncomingId, 1);
    }

    /** Reopens our incoming window once half of it is used; true when it did, and a flow should say so. */
    boolean reopenIncoming() {
        if (incomingWindow <= grantedWindow / 2) {
            incomingWindow = grantedWindow;
            return true;
        }
        return false;
    }

    /** The peer's flow: remote-incoming-window = next-incoming-id(flow) + incoming-window(flow) - next-outgoing-id. */
    void onFlow(FlowPerformative flow) {
        long nextIncoming = flow.nextIncomingId() < 0 ? 0 : flow.nextIncomingId();
        remoteIncomingWindow = flow.incomingWindow() - SerialNumber.diff(nextOutgoingId, nextIncoming);
    }

    /** True while the peer's incoming window has room for another transfer frame. */
    boolean canSend() {
        return remoteIncomingWindow > 0;
    }

    /** Counts a transfer frame we wrote. */
    void transferSent() {
        nextOutgoingId = SerialNumber.add(nextOutgoingId, 1);
        remoteIncomingWindow--;
    }

    /** The delivery-id for the next delivery we send. */
    long takeDeliveryId() {
        long id = nextDeliveryId;
        nextDeliveryId = SerialNumber.add(nextDeliveryId, 1);
        return id;
    }

    /** Fills the session fields of an outgoing flow. */
    FlowPerformative fill(FlowPerformative flow) {
        return flow.nextIncomingId(nextIncomingId).incomingWindow(incomingWindow).nextOutgoingId(nextOutgoingId)
            .outgoingWindow(MAX_WINDOW);
    }
}
