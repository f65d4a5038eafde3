package io.skiffmq.server.amqp10;

import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ChannelInfo;
import io.skiffmq.server.connection.ScopeErrors;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.QueueDelivery;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Role;

/**
 * A session [2.5]: its lifecycle ({@link SessionState}) and the dispatch of its frames to the parts that own the
 * state: {@link SessionWindow} (windows and ids), {@link LinkRegistry} (handles and link states),
 * {@link DeliveryWriter} (what we send), {@link UnsettledDeliveries} (consumers' settlement) and
 * {@link PublisherDispositions} (publishers' settlement). Our channel number is the peer's.
 *
 * <p>Owned by the connection's event loop; links' queues reach it through {@link #onLoop}.
 */
final class AmqpSession {
    private final Amqp10ConnectionHandler connection;
    private final ScopeErrors errors;
    private final int channel;
    private final VirtualHost vhost;
    /** The authenticated user, for the permission checks to come. */
    private final String user;
    /** The peer's container-id: with a link name, it names a durable subscription. */
    private final String containerId;
    private final FrameWriter writer;
    private final EventLoop loop;
    private SessionState state = SessionState.MAPPED;

    private final SessionWindow window;
    private final LinkRegistry links;
    private final UnsettledDeliveries unsettled = new UnsettledDeliveries(this);
    private final DeliveryWriter deliveries;
    private final PublisherDispositions dispositions = new PublisherDispositions(this);
    private final SessionTransactions transactions;

    private final FlowPerformative flowOut = new FlowPerformative();

    AmqpSession(Amqp10ConnectionHandler connection, int channel, VirtualHost vhost, String user, String containerId,
            ScopeErrors errors) {
        this.connection = connection;
        this.errors = errors;
        this.channel = channel;
        this.vhost = vhost;
        this.user = user;
        this.containerId = containerId;
        this.writer = connection.writer();
        this.loop = connection.context().channel().eventLoop();
        this.window = new SessionWindow(connection.config().sessionWindow());
        this.links = new LinkRegistry(connection.counters());
        this.deliveries = new DeliveryWriter(this, connection, window, unsettled, channel);
        this.transactions = new SessionTransactions(this);
    }

    /** What the HTTP API shows of the session: its sending links are its consumers. */
    ChannelInfo describe(int number) {
        java.util.List<ChannelInfo.Consumer> consumers = new java.util.ArrayList<>();
        links.forEachAttached(link -> {
            if (link instanceof OutgoingLink out && out.queueName() != null) {
                consumers.add(new ChannelInfo.Consumer("ctag-" + out.handle(), out.queueName(),
                    !out.preSettled(), 0));
            }
        });
        return new ChannelInfo(number, 0, unsettled.size(), false, transactions.any(), consumers);
    }

    VirtualHost vhost() {
        return vhost;
    }

    /** The session's open transactions [4]. */
    SessionTransactions transactions() {
        return transactions;
    }

    String containerId() {
        return containerId;
    }

    /** The connection, as the owner of its exclusive queues. */
    Object owner() {
        return connection;
    }

    Amqp10ConnectionHandler connection() {
        return connection;
    }

    /** The connection's event loop, for the core to hand work to. */
    io.skiffmq.core.queue.QueueExecutor executor() {
        return connection.loopExecutor();
    }

    /** Flushes once the loop's queued work has run. */
    void flushLater() {
        connection.flushLater();
    }

    BrokerConfig config() {
        return connection.config();
    }

    SessionState state() {
        return state;
    }

    /**
     * Runs {@code task} on this connection's event loop (inline when already there), then flushes. From elsewhere it
     * goes through the loop's mailbox, as the queues' handoffs do, so it keeps its order with what the same thread
     * handed over before and after it.
     */
    void onLoop(Runnable task) {
        if (loop.inEventLoop()) {
            task.run();
            connection.flushLater();
        } else {
            connection.loopExecutor().execute(() -> {
                task.run();
                connection.flushLater();
            });
        }
    }

    void writeFrame(Object performative) {
        writer.writeFrame(channel, performative);
    }

    // ---- session lifecycle [2.5] -------------------------------------------------------------------------

    void onBegin(Begin begin) {
        window.begin(begin.getNextOutgoingId().longValue(), begin.getIncomingWindow().longValue(),
            connection.alarmed());
        Begin reply = new Begin();
        reply.setRemoteChannel(UnsignedShort.valueOf((short) channel));
        reply.setNextOutgoingId(UnsignedInteger.valueOf(window.nextOutgoingId()));
        reply.setIncomingWindow(UnsignedInteger.valueOf(window.incomingWindow()));
        reply.setOutgoingWindow(UnsignedInteger.valueOf(SessionWindow.MAX_WINDOW));
        writeFrame(reply);
    }

    /** The peer's end: answered unless it answers ours. The channel is free afterwards. */
    void onEnd(End end) {
        if (state == SessionState.MAPPED) {
            closeAllLinks();
            writeFrame(new End());
        }
        state = state.to(SessionState.UNMAPPED);
    }

    /**
     * Ends the session with an error (a session-scoped protocol violation). The channel stays ours until the
     * peer's end; frames on it meanwhile are ignored by the connection.
     */
    void end(ErrorCondition error) {
        state = state.to(SessionState.END_SENT);
        closeAllLinks();
        End end = new End();
        end.setError(error);
        writeFrame(end);
    }

    /**
     * A session or link error found outside the session's frame handling (a management request answered on another
     * thread): the session ends or the link detaches, as {@link SessionTable#onFrame} does for errors thrown there.
     * Nothing happens once the session is ending: the error came too late to matter.
     */
    void fail(AmqpException e) {
        if (state != SessionState.MAPPED) {
            return;
        }
        if (e.scope() == AmqpException.Scope.SESSION) {
            errors.log(ScopeErrors.Scope.SESSION, connection.remote(), "ending session " + channel,
                e.condition().symbol() + " " + e.getMessage(), e.condition() == AmqpError.INTERNAL_ERROR, e.getCause(),
                loop);
            end(new ErrorCondition(e.condition().symbol(), e.getMessage()));
        } else if (e.scope() == AmqpException.Scope.LINK) {
            detachWithError(e.handle(), new ErrorCondition(e.condition().symbol(), e.getMessage()), e.getCause());
        } else {
            throw new IllegalArgumentException("a connection error is the connection's to raise", e);
        }
    }

    /** Ends every link (the session ends): each queue takes back the links' unsettled deliveries at once. */
    private void closeAllLinks() {
        LinkRelease release = new LinkRelease();
        closeAllLinks(release);
        release.run();
    }

    /**
     * Ends every link and drops what waits to be sent or settled (end, or the connection going away); the consumer
     * links leave their queues through {@code release}, which the caller runs once every session it ends is done.
     */
    void closeAllLinks(LinkRelease release) {
        transactions.clear(); // first: the deliveries their dispositions held go back through links still open
        links.clear(link -> link.leave(release));
        unsettled.clear();
        deliveries.discardAll();
        dispositions.clear();
    }

    // ---- links [2.6] ---------------------------------------------------------------------------------------

    void onAttach(Attach attach) {
        long handle = attach.getHandle().longValue();
        if (links.inUse(handle)) {
            throw AmqpException.sessionError(AmqpError.HANDLE_IN_USE, "handle %d is in use", handle);
        }
        try {
            Link link;
            if (isManagement(attach)) {
                link = attach.getRole() == Role.SENDER ? ManagementRequestLink.attach(this, attach)
                    : ManagementResponseLink.attach(this, attach);
            } else if (attach.getRole() == Role.SENDER
                    && attach.getTarget() instanceof org.apache.qpid.proton.amqp.transaction.Coordinator) {
                link = CoordinatorLink.attach(this, attach);
            } else {
                link = attach.getRole() == Role.SENDER ? IncomingLink.attach(this, attach)
                    : OutgoingLink.attach(this, attach);
            }
            links.attached(handle, attach.getName(), link);
        } catch (AmqpException e) {
            if (e.scope() != AmqpException.Scope.LINK) {
                throw e;
            }
            writeFrame(refusal(attach));
            ErrorCondition error = new ErrorCondition(e.condition().symbol(), e.getMessage());
            logLinkError(handle, error, e.getCause());
            writeDetach(handle, true, error);
            links.refused(handle, attach.getName());
        }
    }

    /**
     * [2.6.3] refusing a link: attach with a null local terminus, then detach with the error. The other terminus is
     * echoed and a sender states its initial-delivery-count, as RabbitMQ does: protonj2 (the RabbitMQ Java client's
     * engine) drops an attach from a sender without one.
     */
    static Attach refusal(Attach attach) {
        Attach refusal = new Attach();
        refusal.setName(attach.getName());
        refusal.setHandle(attach.getHandle());
        refusal.setSndSettleMode(attach.getSndSettleMode());
        refusal.setRcvSettleMode(attach.getRcvSettleMode());
        if (attach.getRole() == Role.SENDER) {
            refusal.setRole(Role.RECEIVER);
            refusal.setSource(attach.getSource());
        } else {
            refusal.setRole(Role.SENDER);
            refusal.setTarget(attach.getTarget());
            refusal.setInitialDeliveryCount(UnsignedInteger.ZERO);
        }
        return refusal;
    }

    /** A link of the {@code /management} pair: the client's sender targets it, its receiver reads from it. */
    private static boolean isManagement(Attach attach) {
        if (attach.getRole() == Role.SENDER) {
            return attach.getTarget() instanceof org.apache.qpid.proton.amqp.messaging.Target t
                && "/management".equals(t.getAddress());
        }
        return attach.getSource() instanceof org.apache.qpid.proton.amqp.messaging.Source s
            && "/management".equals(s.getAddress());
    }

    /** The response half of the management pair named {@code name}, or null. */
    ManagementResponseLink managementResponses(String name) {
        return links.attachedNamed(name, ManagementResponseLink.class);
    }

    /** The peer's detach: answered when the link was attached; completes our detach when we sent one first. */
    void onDetach(Detach detach) {
        long handle = detach.getHandle().longValue();
        LinkRegistry.Slot slot = links.get(handle);
        if (slot == null) {
            throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "detach of handle %d, which is not attached",
                handle);
        }
        boolean answer = slot.attached();
        links.detached(handle);
        if (answer) {
            boolean closed = Boolean.TRUE.equals(detach.getClosed());
            unsettled.forget(slot.link);
            slot.link.close(closed);
            writeDetach(handle, closed, null);
        }
    }

    /** Detaches a link after a link-scoped error; its handle stays taken until the peer's detach. */
    void detachWithError(long handle, ErrorCondition error) {
        detachWithError(handle, error, null);
    }

    /**
     * The same, logged ({@link ScopeErrors}): an {@code amqp:internal-error} as a broker bug, with {@code cause}'s
     * stack when there is one; any other condition as the peer's, limited.
     */
    void detachWithError(long handle, ErrorCondition error, Throwable cause) {
        LinkRegistry.Slot slot = links.get(handle);
        if (slot == null) {
            links.refused(handle, null);
        } else if (slot.attached()) {
            links.detachSent(handle);
            unsettled.forget(slot.link);
            slot.link.close(false);
        } else {
            return; // detached already: the peer's detach is on its way
        }
        logLinkError(handle, error, cause);
        writeDetach(handle, true, error);
    }

    private void logLinkError(long handle, ErrorCondition error, Throwable cause) {
        errors.log(ScopeErrors.Scope.LINK, connection.remote(), "detaching link " + handle + " of session " + channel,
            error.getCondition() + (error.getDescription() == null ? "" : " " + error.getDescription()),
            AmqpError.INTERNAL_ERROR.symbol().equals(error.getCondition()), cause, loop);
    }

    private void writeDetach(long handle, boolean closed, ErrorCondition error) {
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(handle));
        detach.setClosed(closed);
        detach.setError(error);
        writeFrame(detach);
    }

    // ---- flow [2.5.6, 2.6.7] -------------------------------------------------------------------------------

    void onFlow(FlowPerformative flow) {
        assert loop.inEventLoop();
        window.onFlow(flow);
        if (flow.handle() >= 0) {
            LinkRegistry.Slot slot = links.get(flow.handle());
            if (slot == null) {
                throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "flow for handle %d, which is not attached",
                    flow.handle());
            }
            if (slot.attached() && slot.link instanceof OutgoingLink && SessionTransactions.acquiresInTransaction(flow)) {
                detachWithError(flow.handle(), new ErrorCondition(AmqpError.NOT_IMPLEMENTED.symbol(),
                    "transactional acquisition (a flow with txn-id) is not supported: settle in the transaction"));
            } else if (slot.attached()) {
                slot.link.onFlow(flow);
            }
        } else if (flow.echo()) {
            writeLinkFlow(-1, -1, -1, -1, false);
        }
        deliveries.pump();
    }

    /** The connection's socket takes more again: deliveries waiting for it go on. */
    void writableAgain() {
        deliveries.pump();
    }

    /**
     * A resource alarm rose ({@code up}) or every alarm cleared: a flow closes our incoming window, or opens it
     * again at its initial size and lets publisher links have credit again. Only inbound transfers stop; attaches,
     * dispositions and deliveries to consumers go on.
     */
    void resourceAlarm(boolean up) {
        assert loop.inEventLoop();
        if (state != SessionState.MAPPED) {
            return;
        }
        if (up) {
            window.hold();
        } else {
            window.release();
        }
        writeLinkFlow(-1, -1, -1, -1, false);
        if (!up) {
            links.forEachAttached(link -> {
                if (link instanceof IncomingLink incoming) {
                    incoming.resumeCredit();
                }
            });
        }
    }

    /** True while a resource alarm holds publishers back: publisher links get no new credit. */
    boolean alarmed() {
        return connection.alarmed();
    }

    /** Writes a flow with the session's state and, for {@code handle >= 0}, a link's. */
    void writeLinkFlow(long handle, long deliveryCount, long linkCredit, long available, boolean drain) {
        FlowPerformative flow = flowOut;
        flow.reset();
        window.fill(flow);
        if (handle >= 0) {
            flow.handle(handle).deliveryCount(deliveryCount).linkCredit(linkCredit).drain(drain);
            if (available >= 0) {
                flow.available(available);
            }
        }
        writeFrame(flow);
    }

    // ---- incoming transfers --------------------------------------------------------------------------------

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        assert loop.inEventLoop();
        window.transferReceived();
        LinkRegistry.Slot slot = links.get(transfer.handle());
        if (slot == null) {
            throw AmqpException.sessionError(AmqpError.UNATTACHED_HANDLE, "transfer on handle %d, which is not attached",
                transfer.handle());
        }
        if (!slot.attached()) {
            // in flight when we detached: dropped, as the link's deliveries are
        } else if (slot.link instanceof IncomingLink incoming) {
            incoming.onTransfer(transfer, payload);
        } else if (slot.link instanceof ManagementRequestLink management) {
            management.onTransfer(transfer, payload);
        } else if (slot.link instanceof CoordinatorLink coordinator) {
            coordinator.onTransfer(transfer, payload);
        } else {
            throw AmqpException.sessionError(AmqpError.NOT_ALLOWED, "transfer on handle %d, where we are the sender",
                transfer.handle());
        }
        if (window.reopenIncoming()) {
            writeLinkFlow(-1, -1, -1, -1, false);
        }
    }

    /** Publishers' deliveries {@code first..last} are confirmed: accepted in the next batch of dispositions. */
    void accepted(long first, long last) {
        assert loop.inEventLoop();
        dispositions.accepted(first, last);
    }

    /** Settles a publisher's delivery now with a non-accepted outcome (released, rejected). */
    void settleIncoming(long deliveryId, DeliveryState state) {
        dispositions.settleNow(deliveryId, state);
    }

    /** Writes the batched accepted dispositions, contiguous delivery-ids as one range. */
    void writePendingDispositions() {
        dispositions.writePending();
    }

    // ---- outgoing deliveries -------------------------------------------------------------------------------

    /** Queues a delivery for the consumer link and writes what the peer's window allows. */
    void send(OutgoingLink link, QueueDelivery delivery) {
        assert loop.inEventLoop();
        deliveries.send(link, delivery);
    }

    /** Sends the link's credit state after the deliveries queued before it (echo, drain completion). */
    void sendCreditReply(OutgoingLink link, long deliveryCount, long linkCredit, long available, boolean drain) {
        assert loop.inEventLoop();
        deliveries.sendCreditReply(link, deliveryCount, linkCredit, available, drain);
    }

    /** Sends an encoded message on {@code link}'s handle, pre-settled (management responses). Takes over {@code bytes}. */
    void sendSettled(ManagementResponseLink link, ByteBuf bytes) {
        assert loop.inEventLoop();
        deliveries.sendSettled(link, bytes);
    }

    void onDisposition(DispositionPerformative disposition) throws AmqpDecodeException {
        assert loop.inEventLoop();
        unsettled.onDisposition(disposition);
    }
}
