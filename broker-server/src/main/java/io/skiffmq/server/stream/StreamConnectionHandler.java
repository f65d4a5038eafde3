package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.skiffmq.codec.stream.Command;
import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ConnectionCommand;
import io.skiffmq.codec.stream.ConsumerCommand;
import io.skiffmq.codec.stream.CreditFrame;
import io.skiffmq.codec.stream.ManagementCommand;
import io.skiffmq.codec.stream.PublisherCommand;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.codec.stream.StoreOffsetFrame;
import io.skiffmq.codec.stream.StreamCodec;
import io.skiffmq.codec.stream.StreamDecodeException;
import io.skiffmq.codec.stream.StreamFrame;
import io.skiffmq.codec.stream.StreamFrameDecoder;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.metrics.ConnectionCounters;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.server.Broker;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.server.connection.ChannelInfo;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.connection.ReadSuspension;
import io.skiffmq.server.connection.ConnectionAdmission;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.connection.ConnectionName;
import io.skiffmq.server.loop.FlushAfterTurn;
import io.skiffmq.store.stream.StreamChunk;
import io.skiffmq.store.stream.StreamLog;
import io.skiffmq.store.stream.StreamLogStore;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A connection of RabbitMQ's stream protocol (port 5552), after {@link StreamFrameDecoder}: the handshake
 * ({@link StreamHandshake}), then the commands, each to the part that owns what it touches: {@link Publishers},
 * {@link Subscriptions}, {@link StreamCommands} and {@link SuperStreamCommands}; heartbeats; {@code close} both ways.
 * Behaviour is {@code rabbit_stream_reader}'s (docs/streams.md says where it differs).
 *
 * <p>States: {@code HANDSHAKE} → {@code OPEN} → {@code CLOSE_SENT} (we sent {@code close}; its answer, or a
 * timeout, closes the socket) or {@code CLOSED} (nothing more counts: the client closed, a refusal waits to be
 * answered, or the socket goes). Bad frames close as RabbitMQ closes: before {@code open} the socket, without a
 * word; after, with {@code close} 0x0e (frame too large) or 0x0d (unknown frame).
 *
 * <p>Commands whose answer comes from another thread (a login, the stream's writer, the disk) suspend reading
 * ({@link ReadSuspension}): the commands after them wait, in order, as RabbitMQ's reader takes them one at a time.
 * Publish flow control ({@link PublishFlow}) blocks reading as RabbitMQ does, checked after each frame. The streams
 * in use are {@link StreamUses}'.
 *
 * <p>Owned by the channel's event loop, as are all its parts; {@link #opened()} alone is safe from any thread.
 */
public final class StreamConnectionHandler extends ChannelInboundHandlerAdapter implements ClientConnection {
    private static final System.Logger LOG = System.getLogger(StreamConnectionHandler.class.getName());
    /** RabbitMQ's {@code SILENT_CLOSE_DELAY}: a refused login or open is answered this late, then closed. */
    static final long SILENT_CLOSE_DELAY_MILLIS = 3_000;
    /** RabbitMQ's wait for the answer to its {@code close} ({@code connection_negotiation_step_timeout}). */
    static final long CLOSE_ANSWER_TIMEOUT_MILLIS = 10_000;
    /** Batches kept for reuse: more in flight at once are made and dropped. */
    private static final int BATCH_POOL = 64;

    private enum State { HANDSHAKE, OPEN, CLOSE_SENT, CLOSED }

    private final StreamServer server;
    private final Broker broker;
    private final ConnectionCounters counters;
    private final boolean tls;
    private final ConnectionAdmission admission;
    private final CreditFrame creditFrame = new CreditFrame();
    private final StoreOffsetFrame storeOffsetFrame = new StoreOffsetFrame();
    private final ArrayDeque<PublishBatch> batches = new ArrayDeque<>();
    private final Publishers publishers = new Publishers(this);
    private final Subscriptions subscriptions = new Subscriptions(this);
    private final StreamUses uses = new StreamUses(this, publishers, subscriptions);
    private final StreamCommands commands = new StreamCommands(this);
    private final SuperStreamCommands superStreams = new SuperStreamCommands(this);
    private ChannelHandlerContext ctx;
    private QueueExecutor executor;
    private StreamOutput output;
    private FlushAfterTurn flushes;
    private ReadSuspension<Object> reading;
    private PublishFlow flow;
    private StreamHandshake handshake;
    private ConnectionEnding ending;
    private State state = State.HANDSHAKE;
    /** Deliver v2 (with the committed chunk id) once the client says it takes it. */
    private int deliverVersion = 1;
    /** The frame-max agreed, 0 for none: confirms are cut to it. */
    private long frameMax;
    private long correlationIds;

    StreamConnectionHandler(StreamServer server, ConnectionCounters counters, boolean tls) {
        this.server = server;
        this.broker = server.broker();
        this.counters = counters;
        this.tls = tls;
        this.admission = new ConnectionAdmission(broker, counters);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
        this.ending = ConnectionEnding.of(context.channel(), broker.ends());
        this.executor = broker.loopExecutor(context.channel().eventLoop());
        this.output = new StreamOutput(context, !tls);
        this.flushes = new FlushAfterTurn(executor, output::flush);
        this.reading = new ReadSuspension<>(context.channel(), this::process);
        this.flow = new PublishFlow(reading, settings(), broker.alarms(), publishers::count);
        this.handshake = new StreamHandshake(this, context, server.sasl(), admission, server.config());
    }

    @Override
    public void channelActive(ChannelHandlerContext context) {
        if (!broker.register(this)) {
            ending.end(ConnectionEnd.SERVER_SHUTDOWN, "accepted as the broker began to stop");
            context.close();
            return;
        }
        String name = ConnectionName.of(context.channel());
        admission.named(name, context.channel());
        LOG.log(System.Logger.Level.DEBUG, "connection {0}: accepted (stream)", name);
        handshake.start();
        context.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        handshake.cancelTimeout();
        state = State.CLOSED;
        uses.releaseAll();
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
        if (!reading.hold(msg)) {
            process(msg);
        }
    }

    /** Handles one frame and releases it, or a frame the decoder refused. */
    private void process(Object msg) {
        if (msg instanceof StreamDecodeException refused) {
            decodeFailure(refused);
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        try {
            switch (state) {
                case HANDSHAKE -> {
                    if (!handshake.onCommand(StreamCodec.decode(frame)) && end(ConnectionEnd.PROTOCOL_ERROR,
                            "unexpected frame 0x" + Integer.toHexString(StreamFrame.key(frame)) + " before open")) {
                        closeSocket();
                    }
                }
                case OPEN -> onFrame(frame);
                case CLOSE_SENT -> {
                    if (StreamFrame.key(frame) == CommandKey.CLOSE.responseKey()) {
                        ctx.close();
                    }
                }
                case CLOSED -> {
                }
            }
        } catch (StreamDecodeException e) {
            decodeFailure(e);
        } catch (IllegalArgumentException e) {
            // the flyweights refuse a hot frame they were not given; the decoder sorted them: a bug of ours
            internalError(e);
        } catch (RuntimeException e) {
            internalError(e);
        } finally {
            frame.release();
        }
    }

    private void onFrame(ByteBuf frame) throws StreamDecodeException {
        switch (StreamFrame.key(frame)) {
            case 0x02 -> publishers.publish(frame);
            case 0x09 -> subscriptions.credit(creditFrame.wrap(frame));
            case 0x0a -> subscriptions.storeOffset(storeOffsetFrame.wrap(frame));
            default -> onCommand(StreamCodec.decode(frame));
        }
        flow.blockIfNeeded();
    }

    private void onCommand(Command command) {
        if (command instanceof ConnectionCommand c) {
            onConnectionCommand(c);
        } else if (command instanceof PublisherCommand.DeclarePublisher declare) {
            publishers.declare(declare);
        } else if (command instanceof PublisherCommand.DeletePublisher delete) {
            publishers.delete(delete);
        } else if (command instanceof PublisherCommand.QueryPublisherSequence query) {
            publishers.querySequence(query);
        } else if (command instanceof ConsumerCommand.Subscribe subscribe) {
            subscriptions.subscribe(subscribe);
        } else if (command instanceof ConsumerCommand.Unsubscribe unsubscribe) {
            subscriptions.unsubscribe(unsubscribe);
        } else if (command instanceof ConsumerCommand.QueryOffset query) {
            subscriptions.queryOffset(query);
        } else if (command instanceof ConsumerCommand.ResolveOffsetSpec resolve) {
            subscriptions.resolve(resolve);
        } else if (command instanceof ConsumerCommand.ConsumerUpdateResponse update) {
            subscriptions.updated(update);
        } else if (command instanceof ManagementCommand m) {
            onManagementCommand(m);
        } else {
            unexpected(command);
        }
    }

    private void onConnectionCommand(ConnectionCommand command) {
        if (command instanceof ConnectionCommand.Heartbeat) {
            return; // reading it was the point (the idle handler saw it)
        }
        if (command instanceof ConnectionCommand.Close close) {
            clientClose(close);
        } else if (command instanceof ConnectionCommand.SaslAuthenticate authenticate) {
            handshake.authenticate(authenticate, true);
        } else if (command instanceof ConnectionCommand.ExchangeCommandVersions versions) {
            exchangeVersions(versions);
        } else {
            unexpected(command);
        }
    }

    private void onManagementCommand(ManagementCommand command) {
        if (command instanceof ManagementCommand.CreateStream create) {
            commands.create(create);
        } else if (command instanceof ManagementCommand.DeleteStream delete) {
            commands.delete(delete);
        } else if (command instanceof ManagementCommand.Metadata metadata) {
            commands.metadata(metadata);
        } else if (command instanceof ManagementCommand.StreamStats stats) {
            commands.stats(stats);
        } else if (command instanceof ManagementCommand.Route route) {
            superStreams.route(route);
        } else if (command instanceof ManagementCommand.Partitions partitions) {
            superStreams.partitions(partitions);
        } else if (command instanceof ManagementCommand.CreateSuperStream create) {
            superStreams.create(create);
        } else if (command instanceof ManagementCommand.DeleteSuperStream delete) {
            superStreams.delete(delete);
        } else {
            unexpected(command);
        }
    }

    /** A command a server does not take after open: RabbitMQ closes with 0x0d "unknown frame". */
    private void unexpected(Command command) {
        close(ResponseCode.UNKNOWN_FRAME, "unknown frame", ConnectionEnd.PROTOCOL_ERROR, "unexpected "
            + command.command().protocolName() + (command.isResponse() ? " response" : "") + " after open");
    }

    private void exchangeVersions(ConnectionCommand.ExchangeCommandVersions exchange) {
        deliverVersion = CommandVersions.deliverVersion(exchange);
        respond(new ConnectionCommand.ExchangeCommandVersionsResponse(exchange.correlationId(), ResponseCode.OK,
            CommandVersions.SERVER));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext context) {
        output.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext context) {
        if (context.channel().isWritable() && state == State.OPEN) {
            subscriptions.pumpAll();
            flushLater();
        }
        context.fireChannelWritabilityChanged();
    }

    // ---- for the parts ------------------------------------------------------------------------------------

    QueueExecutor executor() {
        return executor;
    }

    StreamOutput output() {
        return output;
    }

    /** Where error answers are counted. */
    StreamErrors errors() {
        return broker.streamErrors();
    }

    /** The cluster's name (a single node's is its own), as the peer properties give it. */
    String clusterName() {
        return broker.clusterName();
    }

    StreamSettings settings() {
        return server.settings();
    }

    ConsumerGroups groups() {
        return server.groups();
    }

    /** The most partitions a super stream may have ({@code max-super-stream-partitions}). */
    int maxSuperStreamPartitions() {
        return server.config().management().maxSuperStreamPartitions();
    }

    VirtualHost vhost() {
        return admission.vhost();
    }

    Access access() {
        return admission.access();
    }

    /** Writes a response or request frame (flushed with the batch); an error answer is counted. */
    void respond(Command command) {
        broker.streamErrors().answered(command);
        output.command(command);
    }

    /** A flush once this turn of the event loop is done. */
    void flushLater() {
        flushes.request();
    }

    /** True once open and until a close: commands are taken and the client hears of changes. */
    boolean isOpen() {
        return state == State.OPEN;
    }

    /** True while the socket takes more: deliveries wait otherwise. */
    boolean writable() {
        return state == State.OPEN && ctx.channel().isWritable();
    }

    long nextCorrelationId() {
        return ++correlationIds & 0xffff_ffffL;
    }

    /** Null when the user holds {@code permission} on the stream; 0x10 otherwise. */
    ResponseCode permission(Permission permission, String stream) {
        return access().refusal(permission, Access.Resource.QUEUE, stream) == null ? null
            : ResponseCode.ACCESS_REFUSED;
    }

    /** The stream of that name in the connection's virtual host, or null (none, or a queue of another type). */
    StreamQueue stream(String name) {
        return vhost().queue(name) instanceof StreamQueue stream ? stream : null;
    }

    static StreamLog log(StreamQueue queue) {
        return ((StreamLogStore) queue.store()).log();
    }

    StreamUses uses() {
        return uses;
    }

    /** Writes a deliver of {@code chunk} for subscription {@code subscriptionId}. */
    void deliver(int subscriptionId, StreamChunk chunk, long committedChunkId) {
        output.deliver(subscriptionId, deliverVersion, committedChunkId, chunk);
        counters.deliveredAutoAck(chunk.records());
        flushLater();
    }

    // ---- publishing ---------------------------------------------------------------------------------------

    PublishBatch batch() {
        PublishBatch batch = batches.poll();
        return batch != null ? batch : new PublishBatch(this);
    }

    void recycle(PublishBatch batch) {
        if (batches.size() < BATCH_POOL) {
            batches.add(batch);
        }
    }

    /** A batch came back from its stream. */
    void published(PublishBatch batch) {
        if (state == State.OPEN) {
            publishers.published(batch);
            flow.unblockIfPossible();
        }
    }

    /** Most ids a confirm frame carries: what frame-max leaves room for. */
    int maxConfirmIds() {
        return frameMax == 0 ? 65_536 : (int) Math.max(1, Math.min(65_536, (frameMax - 13) / 8));
    }

    PublishFlow flow() {
        return flow;
    }

    /** An alarm rose or cleared: a blocked connection may go on; one the alarm holds is blocked at its next frame. */
    @Override
    public void resourceAlarmsChanged() {
        ctx.executor().execute(() -> {
            if (state == State.OPEN) {
                flow.unblockIfPossible();
            }
        });
    }

    // ---- answers from other threads -----------------------------------------------------------------------

    /**
     * Runs {@code then} with the future's value on this loop, reading suspended meanwhile; nothing once the
     * connection is closing. A failure is an internal error.
     */
    <T> void await(CompletableFuture<T> future, Consumer<T> then) {
        reading.suspend();
        future.whenComplete((value, failure) -> executor.execute(() -> {
            try {
                if (state == State.CLOSE_SENT || state == State.CLOSED) {
                    return;
                }
                if (failure != null) {
                    internalError(failure instanceof CompletionException c && c.getCause() != null
                        ? c.getCause() : failure);
                    return;
                }
                then.accept(value);
                flow.blockIfNeeded();
            } catch (RuntimeException e) {
                internalError(e);
            } finally {
                reading.resume();
                flushLater();
            }
        }));
    }

    /** {@link #await} of {@code work} run on the stream's thread (its log's writer), after what was sent there. */
    <T> void onStream(StreamQueue queue, Supplier<T> work, Consumer<T> then) {
        CompletableFuture<T> answer = new CompletableFuture<>();
        queue.executor().run(() -> {
            try {
                answer.complete(work.get());
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
            }
        });
        await(answer, then);
    }

    /** {@link #await} of {@code work} that may wait for the disk, on the broker's management threads. */
    <T> void offload(Supplier<T> work, Consumer<T> then) {
        await(CompletableFuture.supplyAsync(work, broker.managementExecutor()), then);
    }

    // ---- single active consumer ---------------------------------------------------------------------------

    /** Any thread: {@code member}'s group made it active or not; its client hears it on this loop. */
    void groupChanged(ConsumerGroups.Member member, boolean active, boolean steppingDown) {
        try {
            executor.execute(() -> {
                if (state == State.OPEN) {
                    subscriptions.groupChanged(member, active);
                    flushLater();
                } else if (!active) {
                    groups().steppedDown(member);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            groups().leave(member); // the loop is gone, and the connection with it
        }
    }

    // ---- the handshake's ----------------------------------------------------------------------------------

    /** The handshake sent the {@code open} answer: commands are taken from now on, frames up to frame-max. */
    void opened(long frameMax) {
        this.frameMax = frameMax;
        state = State.OPEN;
        LOG.log(System.Logger.Level.DEBUG, "connection {0}: open, frame-max {1}, heartbeat {2} s", name(), frameMax,
            handshake.heartbeatSeconds());
    }

    /** The host {@code open} and {@code metadata} advertise ({@link AdvertisedAddress}). */
    String advertisedHost() {
        return AdvertisedAddress.host(settings(), tls, ctx.channel());
    }

    int advertisedPort() {
        return AdvertisedAddress.port(settings(), tls, ctx.channel());
    }

    /** Answers with a refusal and closes the socket once it is written (RabbitMQ's {@code failure}). */
    void refuse(Command answer, ConnectionEnd how, String detail) {
        if (ending.end(how, detail)) {
            state = State.CLOSED;
            respond(answer);
            output.flush();
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /**
     * Answers with a refusal {@link #SILENT_CLOSE_DELAY_MILLIS} late, then closes; what the client sends meanwhile
     * is dropped (RabbitMQ's {@code silent_close}).
     */
    void refuseSilently(Command answer, ConnectionEnd how, String detail) {
        if (ending.end(how, detail)) {
            state = State.CLOSED;
            uses.releaseAll();
            ctx.executor().schedule(() -> {
                if (ctx.channel().isActive()) {
                    respond(answer);
                    output.flush();
                    ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
                }
            }, SILENT_CLOSE_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    // ---- closing ------------------------------------------------------------------------------------------

    /** The client closes: answered, then the socket closes (RabbitMQ's reader stops once it answered). */
    private void clientClose(ConnectionCommand.Close close) {
        boolean ok = close.closingCode() == ResponseCode.OK.code();
        ending.end(ok ? ConnectionEnd.CLIENT_CLOSE : ConnectionEnd.CLIENT_ERROR,
            "the client closed with " + close.closingCode() + " " + close.reason());
        state = State.CLOSED;
        uses.releaseAll();
        respond(new Response(CommandKey.CLOSE, close.correlationId(), ResponseCode.OK));
        output.flush();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /**
     * Closes with our {@code close}: its answer, the client's end of the socket, or
     * {@link #CLOSE_ANSWER_TIMEOUT_MILLIS} closes the socket, as RabbitMQ's {@code close_sent} state waits. The socket
     * is read meanwhile (a decoder that lost its place discards), so what the client sent after the bad frame is
     * not left unread to turn the close into a reset.
     */
    void close(ResponseCode code, String reason, ConnectionEnd how, String detail) {
        if (!ending.end(how, detail)) {
            return;
        }
        sendClose(code, reason);
    }

    private void sendClose(ResponseCode code, String reason) {
        state = State.CLOSE_SENT;
        uses.releaseAll();
        reading.stop();
        respond(new ConnectionCommand.Close(nextCorrelationId(), code.code(), reason));
        output.flush();
        ctx.executor().schedule((Runnable) ctx::close, CLOSE_ANSWER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Closes the socket without a frame; the caller decided the end ({@link #end}). */
    void closeSocket() {
        state = State.CLOSED;
        ctx.close();
    }

    /** Decides how the connection ends, if nothing did: true when this call did (the caller closes). */
    boolean end(ConnectionEnd how, String detail) {
        return ending.end(how, detail);
    }

    private void decodeFailure(StreamDecodeException e) {
        ConnectionEnd how = e.responseCode() == ResponseCode.FRAME_TOO_LARGE ? ConnectionEnd.RESOURCE_LIMIT
            : ConnectionEnd.PROTOCOL_ERROR;
        if (state == State.HANDSHAKE) {
            // before authentication RabbitMQ closes without a word
            if (end(how, e.getMessage() + " before open")) {
                closeSocket();
            }
            return;
        }
        if (state == State.OPEN) {
            close(e.responseCode(), e.responseCode() == ResponseCode.FRAME_TOO_LARGE ? "frame too large"
                : "unknown frame", how, e.getMessage());
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext context, Object event) {
        if (event instanceof IdleStateEvent idle) {
            switch (idle.state()) {
                case READER_IDLE -> {
                    if (reading.blocked()) {
                        return; // we do not read: RabbitMQ pauses its heartbeat monitor too
                    }
                    if (end(ConnectionEnd.IDLE_TIMEOUT, "missed heartbeats")) {
                        closeSocket();
                    }
                }
                case WRITER_IDLE -> {
                    if (state == State.OPEN || state == State.HANDSHAKE) {
                        output.heartbeat();
                        output.flush();
                    }
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
        if (root instanceof StreamDecodeException decode) {
            if (!reading.hold(decode)) {
                decodeFailure(decode); // else after the frames before it
            }
            return;
        }
        internalError(cause);
    }

    /**
     * An exception nothing caught: a bug of ours is logged loudly (with its stack, once) and the connection closes
     * with 0x0f, the broker going on; a network failure closes the socket.
     */
    void internalError(Throwable e) {
        ConnectionEnd how = ending.failed(e);
        if (how == ConnectionEnd.INTERNAL_ERROR && state == State.OPEN) {
            sendClose(ResponseCode.INTERNAL_ERROR, "internal error");
        } else if (how != null) {
            closeSocket();
        }
    }

    /** A line about this connection, at INFO (what RabbitMQ's reader logs as a warning and goes on). */
    void log(String message) {
        LOG.log(System.Logger.Level.INFO, "connection {0}: {1}", name(), message);
    }

    /** The connection's name ({@link ConnectionName}); any thread. */
    String name() {
        return ConnectionName.of(ctx.channel());
    }

    // ---- ClientConnection ---------------------------------------------------------------------------------

    /**
     * The broker stops: the socket closes without a {@code close}, as RabbitMQ stops its stream connections, so
     * clients recover (the Java client does not after a server's {@code close}).
     */
    @Override
    public io.netty.util.concurrent.Future<?> closeForShutdown() {
        ctx.executor().execute(() -> {
            if (end(ConnectionEnd.SERVER_SHUTDOWN, "broker forced connection closure with reason 'shutdown'")) {
                closeSocket();
            }
        });
        return ctx.channel().closeFuture();
    }

    /** An administrator closes it: as RabbitMQ's stream reader stops on it, without a {@code close}. */
    @Override
    public io.netty.util.concurrent.Future<?> closeForced(String description) {
        return ctx.executor().submit(() -> {
            if (end(ConnectionEnd.ADMIN_CLOSE, description)) {
                closeSocket();
            }
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
    public ConnectionCounters counters() {
        return counters;
    }

    @Override
    public io.netty.channel.Channel socket() {
        return ctx == null ? null : ctx.channel();
    }

    @Override
    public String protocol() {
        return "stream";
    }

    /**
     * Its publishers and subscriptions, read on its event loop ({@link StreamActivity#NONE} once the loop is gone).
     * Any thread.
     */
    public CompletableFuture<StreamActivity> activity() {
        CompletableFuture<StreamActivity> answer = new CompletableFuture<>();
        try {
            ctx.executor().execute(() -> answer.complete(state == State.OPEN
                ? new StreamActivity(publishers.snapshot(), subscriptions.snapshot(), reading.blocked())
                : StreamActivity.NONE));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            answer.complete(StreamActivity.NONE);
        }
        return answer;
    }

    /**
     * The single active consumer groups on {@code stream} in {@code vhost} ({@link StreamServer#groupMembers}): they
     * span the server's connections, so any of them answers. Any thread.
     */
    public List<GroupMember> groupMembers(String vhost, String stream) {
        return server.groupMembers(vhost, stream);
    }

    /** Publishers declared on the connection, for the metrics. Any thread. */
    public int publisherCount() {
        return publishers.count();
    }

    /** Subscriptions on the connection, for the metrics. Any thread. */
    public int subscriptionCount() {
        return subscriptions.count();
    }

    /** A stream connection has no channels; its publishers and subscriptions are listed by stream elsewhere. */
    @Override
    public CompletableFuture<List<ChannelInfo>> channels() {
        return CompletableFuture.completedFuture(List.of());
    }
}
