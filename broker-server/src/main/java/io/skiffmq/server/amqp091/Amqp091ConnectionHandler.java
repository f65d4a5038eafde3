package io.skiffmq.server.amqp091;

import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.MethodCodec;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.Broker;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.connection.ReadSuspension;
import io.skiffmq.server.connection.ClientProperties;
import io.skiffmq.server.connection.ConnectionAdmission;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.connection.SocketReset;
import io.skiffmq.server.loop.FlushAfterTurn;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.auth.SaslAuthenticator;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * An AMQP 0-9-1 connection after its protocol header: the handshake ({@link Handshake}: {@code start}/{@code start-ok},
 * {@code tune}/{@code tune-ok}, {@code open}), heartbeats, {@code close} both ways, and the {@link ChannelTable}, to
 * which every other frame goes. Who the connection is and where it was let in is its {@link ConnectionAdmission}.
 *
 * <p>States: {@code HANDSHAKE} → {@code OPEN} → {@code CLOSING} (we sent {@code connection.close}: only
 * {@code close-ok} or a crossing {@code close} counts; or the client's close is answered and nothing counts) →
 * closed. Errors are RabbitMQ's: a soft one closes its channel, a hard one the connection, after which the socket
 * closes on {@code close-ok} or after {@link #CLOSE_OK_TIMEOUT_MILLIS}, or at once after a frame error; after the
 * client's close, the client closes it ({@link SocketAfterClose}).
 *
 * <p>Methods that wait for something off the event loop (the disk, a queue's answer) <em>suspend</em> the
 * connection ({@link OffLoopAnswers}): it stops reading, and frames already read wait, in order, until the answer
 * is written. So every method sees the effect of those before it, as RabbitMQ guarantees per channel.
 *
 * <p>While a resource alarm is up, a connection that publishes is blocked as RabbitMQ blocks it
 * ({@link PublisherBlock}): reading stops (composing with the suspensions above) and the client hears
 * {@code connection.blocked}; its heartbeats cannot be read meanwhile, so missing them does not close it.
 *
 * <p>Owned by the channel's event loop, as are all its channels and their consumers; {@link #opened} alone is safe
 * from any thread.
 */
public final class Amqp091ConnectionHandler extends ChannelInboundHandlerAdapter implements ClientConnection {
    private final ConnectionCounters counters;

    @Override
    public ConnectionCounters counters() {
        return counters;
    }
    private static final System.Logger LOG = System.getLogger(Amqp091ConnectionHandler.class.getName());
    static final long CLOSE_OK_TIMEOUT_MILLIS = 3_000;

    private enum State { HANDSHAKE, OPEN, CLOSING }

    private final Broker broker;
    private final BrokerConfig config;
    private final SaslAuthenticator sasl;
    private final DirectReplyTo directReplyTo;
    private final ConnectionAdmission admission;
    private final ChannelTable channels;
    private final OffLoopAnswers answers;
    private ChannelHandlerContext ctx;
    private QueueExecutor executor;
    private FrameOutput output;
    private FlushAfterTurn flushes;
    private Handshake handshake;
    private State state = State.HANDSHAKE;
    /** Our close-ok to the client's close is written: the socket stays open until the client closes it. */
    private boolean lingering;
    private ReadSuspension<Amqp091Frame> reading;
    private PublisherBlock publisherBlock;
    /** How the connection ends, decided once: the guard that makes every later close a no-op. */
    private ConnectionEnding ending;
    /** The client's properties, encoded ({@link ClientProperties}); written once by the handshake, read by the API. */
    private volatile byte[] clientProperties;
    /** The channels' consumer-timeout check, every {@code channel-tick-interval} once open. */
    private java.util.concurrent.ScheduledFuture<?> tick;

    public Amqp091ConnectionHandler(Broker broker, SaslAuthenticator sasl, DirectReplyTo directReplyTo) {
        this(broker, sasl, directReplyTo, new ConnectionCounters(BrokerCounters.AMQP091));
    }

    /** @param counters where this connection counts (its {@link io.skiffmq.server.transport.ByteCounter}'s too) */
    public Amqp091ConnectionHandler(Broker broker, SaslAuthenticator sasl, DirectReplyTo directReplyTo,
            ConnectionCounters counters) {
        this.counters = counters;
        this.broker = broker;
        this.directReplyTo = directReplyTo;
        this.config = broker.config();
        this.admission = new ConnectionAdmission(broker, counters);
        this.channels = new ChannelTable(this, admission, config.channelMax());
        this.answers = new OffLoopAnswers(this, broker.managementExecutor());
        this.sasl = sasl;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
        this.ending = ConnectionEnding.of(context.channel(), broker.ends());
        this.executor = broker.loopExecutor(context.channel().eventLoop());
        this.output = new FrameOutput(context, Negotiation.FRAME_MIN);
        this.flushes = new FlushAfterTurn(executor, output::flush);
        this.reading = new ReadSuspension<>(context.channel(), this::process);
        this.publisherBlock = new PublisherBlock(reading, output, broker.alarms()::active);
        this.handshake = new Handshake(this, context, sasl, admission, channels);
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
        LOG.log(System.Logger.Level.DEBUG, "connection {0}: accepted (AMQP 0-9-1)", name);
        handshake.start();
        context.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        handshake.cancelTimeout();
        if (tick != null) {
            tick.cancel(false);
        }
        state = State.CLOSING;
        channels.releaseAll();
        reading.discard();
        output.discard();
        admission.closed(this);
        broker.unregister(this);
        ending.inactive();
        context.fireChannelInactive();
    }

    // ---- reading ------------------------------------------------------------------------------------------

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        Amqp091Frame frame = (Amqp091Frame) msg;
        if (!reading.hold(frame)) {
            process(frame);
        }
    }

    /** Handles one frame and releases it. */
    private void process(Amqp091Frame frame) {
        Amqp091Channel channel = null;
        try {
            if (state == State.CLOSING) {
                if (frame.channel() == 0 && frame.type() == Amqp091Frame.TYPE_METHOD) {
                    closingMethod(MethodCodec.decode(frame.payload()));
                }
                return;
            }
            if (frame.type() == Amqp091Frame.TYPE_HEARTBEAT) {
                return; // reading it was the point (the idle handler saw it)
            }
            if (frame.channel() == 0) {
                if (frame.type() != Amqp091Frame.TYPE_METHOD) {
                    throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null, "content frame on channel 0");
                }
                onConnectionMethod(MethodCodec.decode(frame.payload()));
                return;
            }
            if (state != State.OPEN) {
                throw Amqp091Exception.of(ReplyCode.CHANNEL_ERROR, null, "frame on channel %d before connection.open",
                    frame.channel());
            }
            channel = channels.get(frame.channel());
            if (channel == null) {
                channels.open(frame);
                return;
            }
            channel.onFrame(frame);
            if (frame.type() != Amqp091Frame.TYPE_METHOD && !channel.receivingContent()) {
                publisherBlock.published(clientCapability("connection.blocked"));
            }
        } catch (Amqp091DecodeException e) {
            closeConnection(Amqp091Exception.of(e.replyCode(), null, "%s", e.detail()));
        } catch (Amqp091Exception e) {
            handleError(channel, e);
        } catch (RuntimeException e) {
            internalError(e, null);
        } finally {
            frame.release();
        }
    }

    /** A soft error closes its channel; a hard one, or one outside a channel, the connection. */
    void handleError(Amqp091Channel channel, Amqp091Exception e) {
        if (channel != null && !e.code().isConnectionError()) {
            channel.closeWithError(e, admission.scopeErrors());
        } else {
            closeConnection(e);
        }
    }

    /** A soft error found outside the channel's own frames (a queue's answer). */
    /** The replicated quorum queues of this node's cluster, or null on a single node. */
    io.skiffmq.server.cluster.ReplicatedQueues replicatedQueues() {
        return broker.cluster() == null ? null : broker.cluster().queues();
    }

    void channelError(Amqp091Channel channel, Amqp091Exception e) {
        handleError(channel, e);
        flushLater();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext context) {
        output.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext context) {
        if (context.channel().isWritable()) {
            channels.writableAgain();
        }
        context.fireChannelWritabilityChanged();
    }

    /** A flush once this turn of the event loop is done (its reads and the mailbox's tasks). */
    void flushLater() {
        flushes.request();
    }

    // ---- suspending for answers from off the loop ---------------------------------------------------------

    /** Stops reading until {@link #resume}: a method waits for an answer. Calls nest. */
    void suspend() {
        reading.suspend();
    }

    /** The answer a {@link #suspend} waited for is written: frames that waited go on, then reading does. */
    void resume() {
        reading.resume();
        flushLater();
    }

    /** {@link OffLoopAnswers#await}: {@code then} runs on this loop, the connection suspended meanwhile. */
    <T> void await(Amqp091Channel channel, CompletableFuture<T> future, Method cause, Consumer<T> then) {
        answers.await(channel, future, cause, then);
    }

    /** {@link OffLoopAnswers#offload}: work that may wait for the disk, on the broker's management threads. */
    <T> void offload(Amqp091Channel channel, Supplier<T> work, Method cause, Consumer<T> then) {
        answers.offload(channel, work, cause, then);
    }

    // ---- connection methods -------------------------------------------------------------------------------

    private void onConnectionMethod(Method method) {
        switch (state) {
            case HANDSHAKE -> handshake.onMethod(method);
            case OPEN -> {
                if (method instanceof ConnectionMethod.Close close) {
                    onClose(close);
                } else if (method instanceof ConnectionMethod.UpdateSecret update) {
                    onUpdateSecret(update);
                } else {
                    throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "unexpected %s on channel 0",
                        method.name());
                }
            }
            default -> throw new IllegalStateException(state.toString());
        }
    }

    /**
     * The client's close: every frame before it was processed (publishes routed), its channels go, and close-ok is
     * written; the client closes the socket once it has read it ({@link SocketAfterClose#lingerAfterCloseOk}).
     */
    private void onClose(ConnectionMethod.Close close) {
        boolean success = close.replyCode() == ReplyCode.REPLY_SUCCESS.code();
        ending.end(success ? ConnectionEnd.CLIENT_CLOSE : ConnectionEnd.CLIENT_ERROR,
            "the client closed with " + close.replyCode() + " " + close.replyText());
        state = State.CLOSING;
        channels.releaseAll();
        admission.closed(this); // exclusive queues go before close-ok, as in rabbit_reader:close_connection/1
        closeOkThenLinger();
    }

    private void closeOkThenLinger() {
        output.method(0, ConnectionMethod.CloseOk.INSTANCE);
        output.flush();
        lingering = true;
        SocketAfterClose.lingerAfterCloseOk(ctx, handshake.heartbeatSeconds());
    }

    /**
     * As RabbitMQ answers it for users of its internal database: their credentials never expire
     * ({@code rabbit_auth_backend_internal:expiry_timestamp/1} is {@code never}), so
     * {@code rabbit_access_control:update_state/2} leaves the user as it was and the new secret is not read, not
     * even checked as a password. What {@code rabbit_reader} does check again is access to the virtual host: a
     * user deleted, or whose permissions there were cleared, since the connection opened is refused with 530.
     */
    private void onUpdateSecret(ConnectionMethod.UpdateSecret update) {
        String vhost = admission.access().vhost();
        if (!admission.mayAccess(vhost)) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, update, "access to vhost '%s' refused for user '%s'",
                vhost, admission.user());
        }
        output.method(0, ConnectionMethod.UpdateSecretOk.INSTANCE);
        LOG.log(System.Logger.Level.INFO, "connection {0}: user ''{1}'' updated secret, reason: {2}", remote(),
            admission.user(), update.reason());
    }

    /**
     * After our close: its close-ok ends the connection; a crossing close is answered, once, and the client closes
     * the socket when it has read the answer. After the client's close everything is dropped.
     */
    private void closingMethod(Method method) {
        if (lingering) {
            return;
        }
        if (method instanceof ConnectionMethod.CloseOk) {
            ctx.close();
        } else if (method instanceof ConnectionMethod.Close) {
            closeOkThenLinger();
        }
    }

    // ---- heartbeats, errors, closing ----------------------------------------------------------------------

    @Override
    public void userEventTriggered(ChannelHandlerContext context, Object event) {
        if (event instanceof IdleStateEvent idle) {
            switch (idle.state()) {
                case READER_IDLE -> {
                    if (publisherBlock.blocked()) {
                        return; // we do not read: RabbitMQ pauses its heartbeat monitor too
                    }
                    if (ending.end(ConnectionEnd.IDLE_TIMEOUT, "missed heartbeats")) {
                        resetSocket(); // RabbitMQ: heartbeat_timeout, then fast_close; nothing is written
                    }
                }
                case WRITER_IDLE -> {
                    output.heartbeat();
                    output.flush();
                }
                default -> {
                }
            }
            return;
        }
        context.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof Amqp091DecodeException decode) {
            closeConnection(Amqp091Exception.of(decode.replyCode(), null, "%s", decode.detail()));
            return;
        }
        internalError(cause, null);
    }

    /**
     * An exception nothing caught: a bug of ours is logged loudly (with its stack, once) and the connection closes
     * with 541, the broker going on; a network failure closes the socket; after the end, either is a no-op.
     */
    void internalError(Throwable e, Method cause) {
        ConnectionEnd how = ending.failed(e);
        if (how == ConnectionEnd.INTERNAL_ERROR) {
            sendClose(Amqp091Exception.of(ReplyCode.INTERNAL_ERROR, cause, "internal error: %s", e));
        } else if (how != null) {
            resetSocket();
        }
    }

    @Override
    public void resourceAlarmsChanged() {
        ctx.executor().execute(() -> {
            publisherBlock.alarmsChanged();
            flushLater();
        });
    }

    @Override
    public io.netty.util.concurrent.Future<?> closeForced(String description) {
        return ctx.executor().submit(() -> {
            if (lingering) {
                resetSocket(); // the client closed already: nothing it sends now counts
                return;
            }
            closeConnection(ConnectionEnd.ADMIN_CLOSE,
                Amqp091Exception.of(ReplyCode.CONNECTION_FORCED, null, "%s", description));
        });
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
        return io.skiffmq.server.loop.OnLoop.read(ctx, channels::describe);
    }

    @Override
    public String protocol() {
        return "AMQP 0-9-1";
    }

    @Override
    public java.util.Map<String, Object> clientProperties() {
        return ClientProperties.decode(clientProperties);
    }

    @Override
    public String userProvidedName() {
        return ClientProperties.connectionName(clientProperties);
    }

    /** The handshake read {@code start-ok}. */
    void clientProperties(java.util.Map<String, Object> table) {
        clientProperties = ClientProperties.ofAmqp091(table);
    }

    @Override
    public io.netty.util.concurrent.Future<?> closeForShutdown() {
        ctx.executor().execute(() -> {
            if (lingering) {
                resetSocket(); // the client closed already: the stop does not wait for it to go
                return;
            }
            closeConnection(ConnectionEnd.SERVER_SHUTDOWN, Amqp091Exception.of(ReplyCode.CONNECTION_FORCED, null,
                "broker forced connection closure with reason 'shutdown'"));
        });
        return ctx.channel().closeFuture();
    }

    /**
     * Closes the connection with {@code connection.close}; the socket closes on the client's {@code close-ok}, or
     * after a timeout.
     */
    void closeConnection(Amqp091Exception e) {
        closeConnection(Amqp091Ends.of(e.code()), e);
    }

    /** The same, saying how the connection ends; a no-op once it has. */
    void closeConnection(ConnectionEnd how, Amqp091Exception e) {
        if (ending.end(how, e.code().code() + " " + e.replyText())) {
            sendClose(e);
        }
    }

    private void sendClose(Amqp091Exception e) {
        State previous = state;
        state = State.CLOSING;
        if (previous == State.HANDSHAKE && handshake.closesSilently(e)) {
            output.flush();
            ctx.close();
            return;
        }
        channels.releaseAll();
        output.method(0, new ConnectionMethod.Close(e.code().code(), e.replyText(), e.classId(), e.methodId()));
        output.flush();
        SocketAfterClose.close(ctx, CLOSE_OK_TIMEOUT_MILLIS);
    }

    /**
     * Closes the socket without {@code connection.close} (an old client's failed login); the caller decided the end
     * ({@link #end}).
     */
    void closeSocket() {
        state = State.CLOSING;
        ctx.close();
    }

    /**
     * Closes the socket with a reset ({@link SocketReset}), when nothing more needs to reach the client: it went
     * silent, or the network failed. The caller decided the end ({@link #end}).
     */
    void resetSocket() {
        state = State.CLOSING;
        SocketReset.close(ctx.channel());
    }

    /** Decides how the connection ends, if nothing did: true when this call did (the caller closes). */
    boolean end(ConnectionEnd how, String detail) {
        return ending.end(how, detail);
    }

    /** True once the connection is going: nothing but the close handshake counts any longer. */
    boolean closing() {
        return state == State.CLOSING;
    }

    /** The {@link Handshake} sent {@code open-ok}: channels may open. */
    void handshakeDone() {
        state = State.OPEN;
        io.skiffmq.server.config.ConsumerTimeout timeout = config.consumerTimeout();
        tick = ctx.executor().scheduleAtFixedRate(() -> {
            channels.checkConsumerTimeouts(System.nanoTime(), timeout, admission.scopeErrors());
            flushLater(); // a channel.close written off a read
        }, timeout.tickMillis(), timeout.tickMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    // ---- for channels -------------------------------------------------------------------------------------

    /** The channel's close handshake is over: its number is free. */
    void channelGone(Amqp091Channel channel) {
        channels.remove(channel);
    }

    FrameOutput output() {
        return output;
    }

    QueueExecutor executor() {
        return executor;
    }

    BrokerConfig config() {
        return config;
    }

    /** The cluster's name (a single node's is its own), as {@code connection.start} gives it. */
    String clusterName() {
        return broker.clusterName();
    }

    DirectReplyTo directReplyTo() {
        return directReplyTo;
    }

    /** True when the client's {@code start-ok} says it has {@code capability} (e.g. consumer_cancel_notify). */
    boolean clientCapability(String capability) {
        return handshake.clientCapability(capability);
    }

    /** The authenticated user. */
    String user() {
        return admission.user();
    }

    /** The user's permission checks in the connection's virtual host; null before {@code connection.open}. */
    Access access() {
        return admission.access();
    }

    /** A channel let go of everything: it no longer counts against the user's {@code max-channels}. */
    void channelReleased() {
        admission.channelClosed();
    }

    /** The connection's name ({@link io.skiffmq.server.connection.ConnectionName}): its log lines start with it. */
    String remote() {
        return io.skiffmq.server.connection.ConnectionName.of(ctx.channel());
    }
}
