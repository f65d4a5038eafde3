package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.SerialNumber;

/**
 * A session's transfer ids and windows both ways [2.5.6], and the delivery ids of what it sends. Sequence numbers
 * are serial numbers ({@link SerialNumber}). Our outgoing window is always the largest there is: only the peer's
 * incoming window holds our transfers back. Owned by the connection's event loop.
 *
 * <p>While a resource alarm is up the incoming window is <em>held</em> at 0 ({@link #hold}): publishers must stop.
 * Transfers the peer sent before our flow reached it are still taken, up to the window that was open when it
 * closed (the most it can have had in flight, as RabbitMQ's {@code incoming_window_margin} allows); one more is
 * {@code amqp:session:window-violation}.
 */
final class SessionWindow {
    static final long MAX_WINDOW = 0xffffffffL;

    private final long grantedWindow;
    private long nextIncomingId;
    private long incomingWindow;
    private long nextOutgoingId;
    private long remoteIncomingWindow;
    private long nextDeliveryId;
    /** Held at 0 by a resource alarm. */
    private boolean held;
    /** Transfers still taken while held: the window that was open when it closed, less what has arrived since. */
    private long inFlightAllowance;

    SessionWindow(long grantedWindow) {
        this.grantedWindow = grantedWindow;
    }

    /**
     * The peer's begin: its first transfer-id and its incoming window; ours opens at the configured size, or stays
     * at 0 when a resource alarm is up ({@code held}).
     */
    void begin(long peerNextOutgoingId, long peerIncomingWindow, boolean held) {
        nextIncomingId = peerNextOutgoingId;
        remoteIncomingWindow = peerIncomingWindow;
        this.held = held;
        incomingWindow = held ? 0 : grantedWindow;
    }

    /** A resource alarm rose: the incoming window closes (a flow should say so). */
    void hold() {
        if (!held) {
            held = true;
            inFlightAllowance = incomingWindow;
            incomingWindow = 0;
        }
    }

    /** The alarms cleared: the incoming window opens at its configured size again (a flow should say so). */
    void release() {
        if (held) {
            held = false;
            inFlightAllowance = 0;
            incomingWindow = grantedWindow;
        }
    }

    long nextOutgoingId() {
        return nextOutgoingId;
    }

    long incomingWindow() {
        return incomingWindow;
    }

    /** Counts an incoming transfer frame; a frame beyond our window is a session error. */
    void transferReceived() {
        if (incomingWindow > 0) {
            incomingWindow--;
        } else if (inFlightAllowance > 0) {
            inFlightAllowance--;
        } else if (held) {
            throw AmqpException.sessionError(AmqpError.WINDOW_VIOLATION,
                "transfer while the incoming window is 0 for a resource alarm (publishers are blocked)");
        } else {
            throw AmqpException.sessionError(AmqpError.WINDOW_VIOLATION, "transfer beyond the incoming window");
        }
        nextIncomingId = SerialNumber.add(nextIncomingId, 1);
    }

    /** Reopens our incoming window once half of it is used; true when it did, and a flow should say so. */
    boolean reopenIncoming() {
        if (!held && incomingWindow <= grantedWindow / 2) {
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
