package io.skiffmq.server.amqp10;

import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;

import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.Broker;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.connection.ClientProperties;
import io.skiffmq.server.connection.ConnectionAdmission;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.loop.FlushAfterTurn;
import io.skiffmq.server.connection.HandshakeDeadline;
import io.skiffmq.server.connection.SocketReset;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.OverLimit;
import io.skiffmq.server.auth.SaslAuthenticator;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.peer.PeerLinks;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * An AMQP 1.0 connection [2.4]: protocol headers, SASL [5.3] ({@link SaslExchange}), {@code open}
 * ({@link OpenNegotiation}, and admission to the virtual host by its {@link ConnectionAdmission}), {@code close},
 * the idle timeout, and the {@link SessionTable}, to which every other frame goes. It knows no links.
 *
 * <p>States, in order: {@code AWAIT_HEADER} → ({@code SASL} → {@code AWAIT_AMQP_HEADER}) → {@code AWAIT_OPEN} →
 * {@code OPEN} → {@code CLOSING}; any error jumps to {@code CLOSING}. A session keeps its channel until the end
 * exchange completes ({@link SessionState}): after our error {@code end}, frames on the channel are dropped until
 * the peer's {@code end}. Owned by the channel's event loop, as are all its sessions and links; {@link #opened}
 * alone is safe from any thread.
 */
public final class Amqp10ConnectionHandler extends ChannelInboundHandlerAdapter implements ClientConnection {
    private final ConnectionCounters counters;

    @Override
    public ConnectionCounters counters() {
        return counters;
    }
    private static final System.Logger LOG = System.getLogger(Amqp10ConnectionHandler.class.getName());

    private enum State { AWAIT_HEADER, SASL, AWAIT_AMQP_HEADER, AWAIT_OPEN, OPEN, CLOSING }

    private final Broker broker;
    private final BrokerConfig config;
    /** Another node's connection ({@link #forNode}). */
    private final boolean fromNode;
    private final SaslAuthenticator sasl;
    private final PerformativeCodec codec = new PerformativeCodec();
    private final OpenNegotiation negotiation;
    private final ConnectionAdmission admission;
    private final SessionTable sessions;
    private ChannelHandlerContext ctx;
    private QueueExecutor loopExecutor;
    private FrameWriter writer;
    private FlushAfterTurn flushes;
    private HeldReads held;
    private SaslExchange saslExchange;
    private State state = State.AWAIT_HEADER;
    /** The peer's, from its open; written once on the event loop, read by the HTTP API too. */
    private volatile String containerId;
    /** The peer's open properties, encoded ({@link ClientProperties}); written once on the loop, read by the API. */
    private volatile byte[] clientProperties;
    private int remoteMaxFrameSize = Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE;
    private ScheduledFuture<?> handshakeTimeout;
    /** A login refused with a reason SASL cannot carry ({@link SaslExchange#refusedAtOpen}), said at open; or null. */
    private LoginResult refusedAtOpen;
    /** How the connection ends, decided once: the guard that makes every later close a no-op. */
    private ConnectionEnding ending;

    public Amqp10ConnectionHandler(Broker broker, SaslAuthenticator sasl) {
        this(broker, sasl, new ConnectionCounters(BrokerCounters.AMQP10));
    }

    /** @param counters where this connection counts (its {@link io.skiffmq.server.transport.ByteCounter}'s too) */
    public Amqp10ConnectionHandler(Broker broker, SaslAuthenticator sasl, ConnectionCounters counters) {
        this(broker, sasl, counters, false);
    }

    /**
     * Another node of the cluster, on the node port (docs/cluster.md, "Messages between nodes"): its TLS handshake
     * proved it holds the cluster's secret, so it opens with the plain AMQP header, as the unrestricted
     * {@link PeerLinks#NODE_USER}, and the messages it sends keep the exchange and routing key
     * they were first published with.
     */
    public static Amqp10ConnectionHandler forNode(Broker broker, ConnectionCounters counters) {
        return new Amqp10ConnectionHandler(broker, null, counters, true);
    }

    private Amqp10ConnectionHandler(Broker broker, SaslAuthenticator sasl, ConnectionCounters counters,
            boolean fromNode) {
        this.fromNode = fromNode;
        this.counters = counters;
        this.broker = broker;
        this.config = broker.config();
        this.sasl = sasl;
        this.admission = new ConnectionAdmission(broker, counters);
        this.sessions = new SessionTable(this, admission);
        this.negotiation = new OpenNegotiation(config);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
        this.ending = ConnectionEnding.of(context.channel(), broker.ends());
        this.writer = new FrameWriter(context);
        this.held = new HeldReads(context.channel(), this::process);
        this.loopExecutor = broker.loopExecutor(context.channel().eventLoop());
        this.flushes = new FlushAfterTurn(loopExecutor, () -> {
            if (ctx.channel().isActive()) {
                flush();
            }
        });
        this.saslExchange = new SaslExchange(sasl, context, loopExecutor, held);
    }

    /** Another node of the cluster ({@link #forNode}). */
    boolean fromNode() {
        return fromNode;
    }

    /** Where management operations run: they may wait for the disk, so never on the event loop. */
    java.util.concurrent.Executor managementExecutor() {
        return broker.managementExecutor();
    }

    /** This connection's event loop, as the core's queues and publishers hand work to it. */
    QueueExecutor loopExecutor() {
        return loopExecutor;
    }

    @Override
    public void channelActive(ChannelHandlerContext context) {
        if (!broker.register(this)) {
            ending.end(ConnectionEnd.SERVER_SHUTDOWN, "accepted as the broker began to stop");
            context.close();
            return;
        }
        String name = io.skiffmq.server.connection.ConnectionName.of(context.channel());
        admission.named(name, context.channel());
        LOG.log(System.Logger.Level.DEBUG, "connection {0}: accepted (AMQP 1.0)", name);
        sessions.resourceAlarm(broker.alarms().any(), false);
        handshakeTimeout = HandshakeDeadline.schedule(context.channel(), config.handshakeTimeoutMillis(), () -> {
            if (state != State.OPEN && state != State.CLOSING) {
                closeConnection(ConnectionEnd.HANDSHAKE_TIMEOUT, AmqpError.RESOURCE_LIMIT_EXCEEDED,
                    "no open within " + config.handshakeTimeoutMillis() + " ms");
            }
        });
        context.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        sessions.closeAll();
        held.discard();
        admission.closed(this);
        broker.unregister(this);
        ending.inactive();
        context.fireChannelInactive();
    }

    // ---- reading ------------------------------------------------------------------------------------------

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        if (!held.hold(msg)) {
            process(msg);
        }
    }

    /** Handles one decoded message (a protocol header or a frame) and releases it. */
    private void process(Object msg) {
        if (msg instanceof ProtocolHeader header) {
            onHeader(header);
            return;
        }
        AmqpFrame frame = (AmqpFrame) msg;
        try {
            if (state == State.CLOSING) {
                return;
            }
            if (frame.type() == AmqpFrame.TYPE_SASL) {
                onSaslFrame(frame.content());
            } else if (!frame.isEmpty()) {
                onAmqpFrame(frame.channel(), frame.content());
            }
        } catch (AmqpDecodeException e) {
            closeConnection(e.condition(), e.getMessage());
        } catch (AmqpException e) {
            closeConnection(e.condition(), e.getMessage());
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext context) {
        flush();
    }

    /** Writes what the sessions hold back (batched dispositions), then flushes. */
    void flush() {
        sessions.writePendingDispositions();
        writer.flush();
    }

    /**
     * A flush once this turn of the event loop is done (its reads and the mailbox's tasks): work handed over from
     * queues in a burst (deliveries, confirms) goes out with one flush.
     */
    void flushLater() {
        flushes.request();
    }

    /** The socket takes more again: deliveries held back while it did not go on ({@link DeliveryWriter#pump}). */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext context) {
        if (context.channel().isWritable()) {
            sessions.writableAgain();
            flushLater();
        }
        context.fireChannelWritabilityChanged();
    }

    private void onHeader(ProtocolHeader header) {
        ByteBuf out = ctx.alloc().buffer(64);
        if (state == State.AWAIT_HEADER && header == ProtocolHeader.SASL) {
            header.writeTo(out);
            saslExchange.writeMechanisms(out);
            state = State.SASL;
        } else if (state == State.AWAIT_HEADER && header == ProtocolHeader.AMQP && fromNode) {
            header.writeTo(out);
            admission.loggedIn(PeerLinks.NODE_USER, null);
            state = State.AWAIT_OPEN;
        } else if (state == State.AWAIT_HEADER && header == ProtocolHeader.AMQP && config.allowPlainAmqp()) {
            header.writeTo(out);
            admission.loggedIn(SaslAuthenticator.ANONYMOUS_USER, null);
            state = State.AWAIT_OPEN;
        } else if (state == State.AWAIT_AMQP_HEADER && header == ProtocolHeader.AMQP) {
            header.writeTo(out);
            state = State.AWAIT_OPEN;
        } else {
            // [5.3.2] the AMQP header comes after a successful outcome only
            out.release();
            ending.end(ConnectionEnd.PROTOCOL_ERROR, header + " header in state " + state);
            state = State.CLOSING;
            writer.flush();
            ctx.close();
            return;
        }
        writer.write(out);
    }

    /** {@code sasl-init}: checked off the loop ({@link SaslExchange}); {@link #onLogin} goes on, on this loop. */
    private void onSaslFrame(ByteBuf body) throws AmqpDecodeException {
        Object frame = codec.decodeSasl(body);
        if (state != State.SASL || !(frame instanceof SaslInit init)) {
            throw AmqpException.connectionError(AmqpError.NOT_ALLOWED, "unexpected SASL frame %s", frame);
        }
        saslExchange.onInit(init, this::onLogin, this::flushLater);
    }

    /** The login's outcome (null: the check failed internally); dropped when the connection closed meanwhile. */
    private void onLogin(LoginResult result) {
        if (state != State.SASL || !ctx.channel().isActive()) {
            return;
        }
        ByteBuf outcome = saslExchange.outcome(SaslExchange.code(result));
        if (SaslExchange.refusedAtOpen(result)) {
            refusedAtOpen = result;
            writer.write(outcome);
            state = State.AWAIT_AMQP_HEADER;
            return;
        }
        if (result == null || !result.succeeded()) {
            ending.end(ConnectionEnd.AUTH_FAILURE, "authentication failed: "
                + (result == null ? "internal error" : result.reason()));
            state = State.CLOSING; // SASL has no error frame: the outcome, then the socket closes
            writer.flush();
            ctx.writeAndFlush(outcome).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        admission.loggedIn(result.user(), saslExchange.mechanism());
        writer.write(outcome);
        state = State.AWAIT_AMQP_HEADER;
    }

    private void onAmqpFrame(int channel, ByteBuf body) throws AmqpDecodeException {
        Object performative = codec.decode(body);
        if (state == State.AWAIT_OPEN) {
            if (!(performative instanceof Open open)) {
                throw AmqpException.connectionError(AmqpError.ILLEGAL_STATE, "expected open, got %s",
                    performative.getClass().getSimpleName());
            }
            onOpen(open);
            return;
        }
        if (state != State.OPEN) {
            throw AmqpException.connectionError(AmqpError.ILLEGAL_STATE, "frame before the connection is open");
        }
        if (performative instanceof Close close) {
            onClose(close);
            return;
        }
        if (performative instanceof Begin begin) {
            sessions.begin(channel, begin, containerId);
            return;
        }
        sessions.onFrame(channel, performative, body);
    }

    private void onOpen(Open open) {
        containerId = open.getContainerId();
        clientProperties = open.getProperties() == null ? null : ClientProperties.ofAmqp10(open.getProperties());
        String vhostName = OpenNegotiation.vhostName(open);
        VirtualHost found = admission.find(vhostName);
        remoteMaxFrameSize = negotiation.remoteMaxFrameSize(open);
        int channelMax = negotiation.channelMax(open);
        sessions.channelMax(channelMax);
        writer.writeFrame(0, negotiation.ours(channelMax, broker.clusterName()));
        state = State.OPEN;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (refusedAtOpen != null) {
            // rabbit_amqp_reader's check_user_loopback, the first check of open
            closeConnection(ConnectionEnd.AUTH_FAILURE, AmqpError.UNAUTHORIZED_ACCESS, refusedAtOpen.reason());
            return;
        }
        if (found == null) {
            closeConnection(AmqpError.UNAUTHORIZED_ACCESS, "AMQP 1.0 connection failed: virtual host '" + vhostName
                + "' does not exist");
            return;
        }
        if (!admission.mayAccess(vhostName)) {
            closeConnection(AmqpError.UNAUTHORIZED_ACCESS, "access to vhost '" + vhostName + "' refused for user '"
                + admission.user() + "'");
            return;
        }
        OverLimit overLimit = admission.count(vhostName);
        if (overLimit != null) {
            closeConnection(AmqpError.RESOURCE_LIMIT_EXCEEDED, overLimit.amqp10());
            return;
        }
        admission.admitted(found, vhostName);
        admission.tuned(remoteMaxFrameSize, channelMax, (int) (config.idleTimeoutMillis() / 1000));
        // incoming frames may now be as large as we offered
        ctx.pipeline().get(Amqp10FrameDecoder.class).maxFrameSize(config.maxFrameSize());
        var idle = negotiation.idleHandler(open);
        if (idle != null) {
            ctx.pipeline().addBefore(ctx.name(), "idle", idle);
        }
    }

    private void onClose(Close close) {
        ending.end(close.getError() == null ? ConnectionEnd.CLIENT_CLOSE : ConnectionEnd.CLIENT_ERROR,
            close.getError() == null ? "the client closed" : "the client closed with " + close.getError());
        state = State.CLOSING;
        ByteBuf out = ctx.alloc().buffer(16);
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, new Close(), 0);
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext context, Object event) {
        if (event instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) { // from Heartbeats
            // the close goes out, then a reset: a peer that stopped reading would never see a FIN queued behind
            // what it left unread (RabbitMQ's sockets linger 0)
            closeConnection(ConnectionEnd.IDLE_TIMEOUT, AmqpError.RESOURCE_LIMIT_EXCEEDED,
                "no frame for " + config.idleTimeoutMillis() + " ms");
            return;
        }
        context.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof AmqpDecodeException decode) {
            switch (decode.failure()) {
                case BAD_PROTOCOL_HEADER, UNSUPPORTED_PROTOCOL -> {
                    // [2.2] answer with the header we support, then close
                    if (!ending.end(ConnectionEnd.PROTOCOL_ERROR, decode.getMessage())) {
                        return;
                    }
                    state = State.CLOSING;
                    ByteBuf out = ctx.alloc().buffer(8);
                    ProtocolHeader.SASL.writeTo(out);
                    ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
                }
                default -> closeConnection(decode.condition(), decode.getMessage());
            }
            return;
        }
        ConnectionEnd how = ending.failed(cause);
        if (how == ConnectionEnd.INTERNAL_ERROR) {
            sendClose(AmqpError.INTERNAL_ERROR, "internal error: " + root, false);
        } else if (how != null) {
            state = State.CLOSING; // the network failed: nothing can be said any more
            SocketReset.close(ctx.channel());
        }
    }

    /**
     * RabbitMQ's text ({@code rabbit_amqp_reader:terminate/2}, which the RabbitMQ clients' suites look for) with the
     * spec's condition: RabbitMQ's is {@code amqp:internal-error} there.
     */
    @Override
    public io.netty.util.concurrent.Future<?> closeForced(String description) {
        return ctx.executor().submit(() -> closeConnection(ConnectionEnd.ADMIN_CLOSE, AmqpError.CONNECTION_FORCED,
            "Connection forced: " + description));
    }

    @Override
    public io.skiffmq.server.connection.ConnectionDetails details() {
        return admission.details();
    }

    @Override
    public Access opened() {
        return admission.access();
    }

    @Override
    public io.netty.channel.Channel socket() {
        return ctx == null ? null : ctx.channel();
    }

    @Override
    public java.util.concurrent.CompletableFuture<java.util.List<io.skiffmq.server.connection.ChannelInfo>> channels() {
        return io.skiffmq.server.loop.OnLoop.read(ctx, sessions::describe);
    }

    @Override
    public String protocol() {
        return "AMQP 1.0";
    }

    @Override
    public String containerId() {
        return containerId;
    }

    @Override
    public java.util.Map<String, Object> clientProperties() {
        return ClientProperties.decode(clientProperties);
    }

    /** The user's permission checks in the connection's virtual host; null before {@code open}. */
    Access access() {
        return admission.access();
    }

    /** The authenticated user. */
    String user() {
        return admission.user();
    }

    Broker broker() {
        return broker;
    }

    @Override
    public io.netty.util.concurrent.Future<?> closeForShutdown() {
        ctx.executor().execute(() -> closeConnection(ConnectionEnd.SERVER_SHUTDOWN, AmqpError.CONNECTION_FORCED,
            "broker is shutting down"));
        return ctx.channel().closeFuture();
    }

    /**
     * Closes with {@code condition}: with a {@code close} frame once AMQP is spoken (sending our {@code open} first
     * if we have not [2.4.2]), by closing the socket in the SASL phase, which has no error frame.
     */
    void closeConnection(AmqpError condition, String description) {
        closeConnection(Amqp10Ends.of(condition), condition, description);
    }

    /** The same, saying how the connection ends; a no-op once it has. */
    private void closeConnection(ConnectionEnd how, AmqpError condition, String description) {
        if (ending.end(how, condition.symbol() + " " + description)) {
            sendClose(condition, description, how == ConnectionEnd.IDLE_TIMEOUT);
        }
    }

    /** @param reset the socket closes with a reset ({@link SocketReset}): the peer went silent */
    private void sendClose(AmqpError condition, String description, boolean reset) {
        State previous = state;
        state = State.CLOSING;
        if (previous == State.AWAIT_OPEN || previous == State.OPEN) {
            if (previous == State.AWAIT_OPEN) {
                writer.writeFrame(0, negotiation.beforeClose(broker.clusterName()));
            }
            Close close = new Close();
            close.setError(new ErrorCondition(condition.symbol(), description));
            writer.writeFrame(0, close);
            sessions.closeAll();
        }
        // what was written before the error goes out first: a protocol header answering the client's, when the
        // garbage that failed arrived in the same read
        writer.flush();
        if (reset) {
            SocketReset.close(ctx.channel());
        } else {
            ctx.channel().close();
        }
    }

    /**
     * Applies the alarms up now ({@link SessionTable#resourceAlarm}): sessions that told their publishers so with a
     * flow have it written at once. Sessions begun later start as {@link #alarmed} says.
     */
    @Override
    public void resourceAlarmsChanged() {
        ctx.executor().execute(() -> {
            if (sessions.resourceAlarm(broker.alarms().any(), state == State.OPEN)) {
                flush();
            }
        });
    }

    /** True while a resource alarm holds publishers back. */
    boolean alarmed() {
        return sessions.alarmed();
    }

    // ---- for sessions -------------------------------------------------------------------------------------

    FrameWriter writer() {
        return writer;
    }

    ChannelHandlerContext context() {
        return ctx;
    }

    BrokerConfig config() {
        return config;
    }

    /** Largest frame the peer accepts. */
    int remoteMaxFrameSize() {
        return remoteMaxFrameSize;
    }

    /** The connection's name ({@link io.skiffmq.server.connection.ConnectionName}): its log lines start with it. */
    String remote() {
        return io.skiffmq.server.connection.ConnectionName.of(ctx.channel());
    }
}
