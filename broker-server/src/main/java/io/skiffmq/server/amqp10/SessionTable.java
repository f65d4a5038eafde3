package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.server.connection.ConnectionAdmission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.End;

/**
 * An AMQP 1.0 connection's sessions by channel [2.5]: {@code begin} within the channel-max and the user's
 * {@code max-channels}, every session frame routed to its session, and the session's and link's errors turned into
 * {@code end} and {@code detach} (a connection error is thrown on). A session counts against the user's
 * {@code max-channels} until its {@code end} exchange completes or the connection goes. Owned by the connection's
 * event loop; not thread-safe.
 */
final class SessionTable {

    private final Amqp10ConnectionHandler connection;
    private final ConnectionAdmission admission;
    private final Map<Integer, AmqpSession> sessions = new HashMap<>();
    private int channelMax;
    /** The broker's resource alarms as last applied to the sessions: any up. */
    private boolean alarmed;

    SessionTable(Amqp10ConnectionHandler connection, ConnectionAdmission admission) {
        this.connection = connection;
        this.admission = admission;
    }

    /** The channel-max agreed at {@code open}. */
    void channelMax(int max) {
        this.channelMax = max;
    }

    /** {@code begin} on {@code channel}: a new session, counted against the user's {@code max-channels}. */
    void begin(int channel, Begin begin, String containerId) {
        if (sessions.containsKey(channel)) {
            throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "channel %d already has a session", channel);
        }
        if (channel > channelMax) {
            throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "channel %d above channel-max %d", channel,
                channelMax);
        }
        if (begin.getRemoteChannel() != null) {
            throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "begin answering a session we never began");
        }
        String overLimit = admission.channelOpened();
        if (overLimit != null) {
            throw AmqpException.connectionError(AmqpError.RESOURCE_LIMIT_EXCEEDED, "%s", overLimit);
        }
        AmqpSession session = new AmqpSession(connection, channel, admission.vhost(), admission.user(), containerId,
            admission.scopeErrors());
        sessions.put(channel, session);
        session.onBegin(begin);
    }

    /**
     * A frame for the session on {@code channel}; a session or link error ends the session or detaches the link.
     *
     * @param body the frame's body, for a transfer's payload; released by the caller
     * @throws AmqpException a connection error
     */
    void onFrame(int channel, Object performative, ByteBuf body) throws AmqpDecodeException {
        AmqpSession session = sessions.get(channel);
        if (session == null) {
            // [2.5.1] frames on a channel without a session are a connection error
            throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "%s on channel %d, which has no session",
                performative.getClass().getSimpleName(), channel);
        }
        if (session.state() == SessionState.END_SENT && !(performative instanceof End)) {
            // [2.5.5] after our end, frames still in flight are ignored until the peer's end
            return;
        }
        try {
            if (performative instanceof TransferPerformative transfer) {
                session.onTransfer(transfer, body);
            } else if (performative instanceof FlowPerformative flow) {
                session.onFlow(flow);
            } else if (performative instanceof DispositionPerformative disposition) {
                session.onDisposition(disposition);
            } else if (performative instanceof Attach attach) {
                session.onAttach(attach);
            } else if (performative instanceof Detach detach) {
                session.onDetach(detach);
            } else if (performative instanceof End end) {
                session.onEnd(end);
                forget(channel);
            } else {
                throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "unexpected %s",
                    performative.getClass().getSimpleName());
            }
        } catch (AmqpException e) {
            if (e.scope() == AmqpException.Scope.CONNECTION) {
                throw e;
            }
            session.fail(e);
        }
    }

    /** The session on {@code channel} is gone: it no longer counts against the user's {@code max-channels}. */
    private void forget(int channel) {
        if (sessions.remove(channel) != null) {
            admission.channelClosed();
        }
    }

    /** What the HTTP API shows of the sessions, as channels, by channel number. */
    List<io.skiffmq.server.connection.ChannelInfo> describe() {
        List<io.skiffmq.server.connection.ChannelInfo> described = new ArrayList<>();
        sessions.forEach((channel, session) -> described.add(session.describe(channel)));
        described.sort(java.util.Comparator.comparingInt(io.skiffmq.server.connection.ChannelInfo::number));
        return described;
    }

    /** The connection is going: every session's links close, and no session counts any longer. */
    void closeAll() {
        // one release for the connection: a queue takes back all of its consumers' unsettled deliveries at once
        LinkRelease release = new LinkRelease();
        for (AmqpSession session : new ArrayList<>(sessions.values())) {
            session.closeAllLinks(release);
        }
        release.run();
        for (int i = 0; i < sessions.size(); i++) {
            admission.channelClosed();
        }
        sessions.clear();
    }

    /** Writes what the sessions hold back (batched dispositions). */
    void writePendingDispositions() {
        for (AmqpSession session : sessions.values()) {
            session.writePendingDispositions();
        }
    }

    /** The socket takes more again: deliveries held back go on ({@link DeliveryWriter#pump}). */
    void writableAgain() {
        for (AmqpSession session : new ArrayList<>(sessions.values())) {
            session.writableAgain();
        }
    }

    /**
     * The broker's resource alarms, any up: when that changes whether publishers are held back and {@code tell}, every
     * session says so with a flow (incoming-window 0, or its initial window again). Sessions begun later start as
     * {@link #alarmed} says.
     *
     * @return true when sessions were told (frames to flush)
     */
    boolean resourceAlarm(boolean up, boolean tell) {
        if (up == alarmed) {
            return false;
        }
        alarmed = up;
        if (!tell) {
            return false;
        }
        for (AmqpSession session : sessions.values()) {
            session.resourceAlarm(up);
        }
        return true;
    }

    /** True while a resource alarm holds publishers back. */
    boolean alarmed() {
        return alarmed;
    }
}
