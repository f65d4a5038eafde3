package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.codec.amqp10.TransferPerformative;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.messaging.TerminusDurability;
import org.apache.qpid.proton.amqp.messaging.TerminusExpiryPolicy;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;

/**
 * One AMQP 1.0 connection of the lean load engine ({@link LeanEngine}): one session (channel 0) with one link
 * (handle 0), on the project's codec over Netty, with no client library in between. This class does the
 * handshake (SASL PLAIN or ANONYMOUS, open, begin, attach), cuts frames out of the socket bytes in place and hands
 * {@code transfer}, {@code flow} and {@code disposition} to the link's role ({@link LeanSender},
 * {@link LeanReceiver}) through the codec's reusable performatives; the rarer frames go through proton-j.
 *
 * <p>Writes collect in one buffer ({@link #output}) that goes to the channel when full and is flushed once per read
 * batch or send batch ({@link #flush}), never per frame.
 *
 * <p>Owned by the channel's event loop; {@link #ready} and {@link #close} may be used from any thread.
 */
abstract class LeanConnection extends ByteToMessageDecoder {
    /** Frames this client accepts: far above the small messages it measures, and what bounds a cut frame. */
    static final int MAX_FRAME_SIZE = 1 << 20;
    /** Session windows this client offers: never the limit (credit and in-flight are). */
    static final long WINDOW = Integer.MAX_VALUE;
    /** Size of the buffers writes collect in: a socket write's worth, ~1,500 transfers of 12-byte bodies. */
    private static final int OUTPUT_SIZE = 64 * 1024;
    private static final long SASL_HEADER = 0x414d5150_03010000L;
    private static final long AMQP_HEADER = 0x414d5150_00010000L;

    /** Legal order: SASL_HEADER → SASL → AMQP_HEADER → OPEN → BEGIN → ATTACH → ACTIVE; any → CLOSED. */
    private enum State { SASL_HEADER, SASL, AMQP_HEADER, OPEN, BEGIN, ATTACH, ACTIVE, CLOSED }

    /**
     * Where a connection goes and what its link attaches to.
     *
     * @param user the SASL PLAIN user; empty for ANONYMOUS
     * @param address a queue name, or a topic name with {@code topic}
     */
    record Endpoint(String host, int port, String user, String password, String address, boolean topic) {
    }

    final LoadCounters counters;
    /** Errors a run describes on stderr, the first few: the rest are only counted. */
    static final long REPORTED_ERRORS = 5;
    final String name;
    final Endpoint endpoint;
    private final PerformativeCodec codec = new PerformativeCodec();
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private State state = State.SASL_HEADER;
    private boolean closing;
    ChannelHandlerContext ctx;
    /** The peer's frame limit, from its {@code open}. */
    int remoteMaxFrameSize = io.skiffmq.codec.amqp10.Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE;
    private ByteBuf output;

    LeanConnection(LoadCounters counters, String name, Endpoint endpoint) {
        this.counters = counters;
        this.name = name;
        this.endpoint = endpoint;
    }

    /** Completes once the link is attached and, for a receiver, has granted its credit. */
    CompletableFuture<Void> ready() {
        return ready;
    }

    /** Our {@code attach}; the peer's reply reaches {@link #onAttached}. */
    abstract Attach attach();

    /** The broker's {@code begin}: its windows. */
    void onBegin(Begin begin) {
    }

    /** The link is attached (on the event loop). */
    abstract void onAttached(Attach reply);

    abstract void onTransfer(TransferPerformative transfer, ByteBuf buf, int payload, int end, long now);

    abstract void onFlow(FlowPerformative flow);

    abstract void onDisposition(DispositionPerformative disposition);

    /** Once per read batch, after its frames: where settlements, credit and more sends go out. */
    abstract void onReadBatchEnd();

    /** The connection failed or closed before {@link #close}: the role gives up what it waits for. */
    abstract void onFailed();

    void markReady() {
        ready.complete(null);
    }

    PerformativeCodec codec() {
        return codec;
    }

    static Source source(String address, boolean topic) {
        Source source = new Source();
        source.setAddress(address);
        source.setCapabilities(Symbol.valueOf(topic ? "topic" : "queue"));
        if (topic) {
            // a JMS non-durable subscription: the subscriber's queue goes with the link
            source.setDurable(TerminusDurability.NONE);
            source.setExpiryPolicy(TerminusExpiryPolicy.LINK_DETACH);
        }
        return source;
    }

    static Target target(String address, boolean topic) {
        Target target = new Target();
        target.setAddress(address);
        target.setCapabilities(Symbol.valueOf(topic ? "topic" : "queue"));
        return target;
    }

    static Attach attach(String name, Role role, Source source, Target target) {
        Attach attach = new Attach();
        attach.setName(name);
        attach.setHandle(UnsignedInteger.ZERO);
        attach.setRole(role);
        // a sender may pre-settle (--settled=true), so it asks for mixed: a broker may refuse a settled transfer
        // on a link whose snd-settle-mode is unsettled [2.7.3], as RabbitMQ 4.0.3 and SkiffMQ do
        attach.setSndSettleMode(role == Role.SENDER ? SenderSettleMode.MIXED : SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(ReceiverSettleMode.FIRST);
        attach.setSource(source);
        attach.setTarget(target);
        if (role == Role.SENDER) {
            attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        }
        return attach;
    }

    String name() {
        return name;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ProtocolHeader.SASL.writeTo(output(8));
        flush();
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        long now = System.nanoTime();
        while (state != State.CLOSED) {
            int index = in.readerIndex();
            int readable = in.readableBytes();
            if (readable < 8) {
                return;
            }
            if (state == State.SASL_HEADER || state == State.AMQP_HEADER) {
                long expected = state == State.SASL_HEADER ? SASL_HEADER : AMQP_HEADER;
                if (in.getLong(index) != expected) {
                    fail(String.format("expected the protocol header %016x, got %016x", expected, in.getLong(index)));
                    return;
                }
                in.skipBytes(8);
                state = state == State.SASL_HEADER ? State.SASL : State.OPEN;
                continue;
            }
            long size = in.getUnsignedInt(index);
            int doff = in.getUnsignedByte(index + 4);
            if (size < 8 || size > MAX_FRAME_SIZE || doff < 2 || doff * 4L > size) {
                fail("bad frame: size " + size + ", doff " + doff);
                return;
            }
            if (readable < size) {
                return;
            }
            int end = index + (int) size;
            if (end - index > doff * 4) {
                // the frame's body as [readerIndex, writerIndex) of the cumulation itself, for the codec's
                // flyweights: no slice per frame; the writer index is put back before anything else reads it
                int writerIndex = in.writerIndex();
                in.writerIndex(end).readerIndex(index + doff * 4);
                try {
                    frame(in, in.getUnsignedByte(index + 5), end, now);
                } finally {
                    in.writerIndex(writerIndex);
                }
            }
            // an empty frame is a heartbeat [2.4.5]
            in.readerIndex(end);
        }
        in.skipBytes(in.readableBytes());
    }

    private void frame(ByteBuf body, int type, int end, long now) throws AmqpDecodeException {
        if (type == AmqpFrame.TYPE_SASL) {
            sasl(codec.decodeSasl(body));
            return;
        }
        Object performative = codec.decode(body);
        if (performative instanceof TransferPerformative transfer) {
            onTransfer(transfer, body, body.readerIndex(), end, now);
        } else if (performative instanceof DispositionPerformative disposition) {
            onDisposition(disposition);
        } else if (performative instanceof FlowPerformative flow) {
            onFlow(flow);
        } else if (performative instanceof Open open) {
            opened(open);
        } else if (performative instanceof Begin begin) {
            state = State.ATTACH;
            onBegin(begin);
        } else if (performative instanceof Attach reply) {
            // a refused attach has no terminus and is followed by a detach with the error [2.6.3]
            boolean refused = reply.getRole() == Role.RECEIVER ? reply.getTarget() == null : reply.getSource() == null;
            if (!refused) {
                state = State.ACTIVE;
                onAttached(reply);
            }
        } else if (performative instanceof Detach detach) {
            fail("link detached: " + describe(detach.getError()));
        } else if (performative instanceof End sessionEnd) {
            fail("session ended: " + describe(sessionEnd.getError()));
        } else if (performative instanceof Close close) {
            if (closing) {
                state = State.CLOSED;
                ctx.close();
            } else {
                fail("connection closed by the broker: " + describe(close.getError()));
            }
        }
    }

    private void sasl(Object frame) {
        if (frame instanceof SaslMechanisms mechanisms) {
            boolean plain = !endpoint.user().isEmpty();
            boolean offered = false;
            for (Symbol mechanism : mechanisms.getSaslServerMechanisms()) {
                offered |= mechanism.toString().equals(plain ? "PLAIN" : "ANONYMOUS");
            }
            if (!offered) {
                fail("the broker does not offer SASL " + (plain ? "PLAIN" : "ANONYMOUS"));
                return;
            }
            SaslInit init = new SaslInit();
            init.setMechanism(Symbol.valueOf(plain ? "PLAIN" : "ANONYMOUS"));
            init.setHostname(endpoint.host());
            init.setInitialResponse(new Binary(plain
                ? ("\0" + endpoint.user() + "\0" + endpoint.password()).getBytes(StandardCharsets.UTF_8)
                : new byte[0]));
            writeFrame(AmqpFrame.TYPE_SASL, init);
            flush();
        } else if (frame instanceof SaslOutcome outcome) {
            if (outcome.getCode() != SaslCode.OK) {
                fail("SASL failed: " + outcome.getCode());
                return;
            }
            state = State.AMQP_HEADER;
            ProtocolHeader.AMQP.writeTo(output(8));
            Open open = new Open();
            open.setContainerId(name);
            open.setHostname(endpoint.host());
            open.setMaxFrameSize(UnsignedInteger.valueOf(MAX_FRAME_SIZE));
            writeFrame(AmqpFrame.TYPE_AMQP, open);
            Begin begin = new Begin();
            begin.setNextOutgoingId(UnsignedInteger.ZERO);
            begin.setIncomingWindow(UnsignedInteger.valueOf(WINDOW));
            begin.setOutgoingWindow(UnsignedInteger.valueOf(WINDOW));
            writeFrame(AmqpFrame.TYPE_AMQP, begin);
            writeFrame(AmqpFrame.TYPE_AMQP, attach());
            flush();
        }
    }

    private void opened(Open open) {
        state = State.BEGIN;
        if (open.getMaxFrameSize() != null) {
            remoteMaxFrameSize = (int) Math.min(MAX_FRAME_SIZE, open.getMaxFrameSize().longValue());
        }
        long idle = open.getIdleTimeOut() == null ? 0 : open.getIdleTimeOut().longValue();
        if (idle > 0) {
            // [2.4.5] send something at least this often: an empty frame at half the peer's timeout
            ctx.executor().scheduleAtFixedRate(() -> {
                if (ctx.channel().isActive()) {
                    PerformativeCodec.writeEmptyFrame(output(8));
                    flush();
                }
            }, idle / 2, idle / 2, TimeUnit.MILLISECONDS);
        }
    }

    private static String describe(ErrorCondition error) {
        return error == null ? "no error given" : error.getCondition() + " " + error.getDescription();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (state == State.ACTIVE) {
            onReadBatchEnd();
        }
        flush();
        super.channelReadComplete(ctx);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (output != null) {
            output.release();
            output = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!closing) {
            fail("the connection closed");
        }
        state = State.CLOSED;
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(cause.toString());
    }

    /** Counts one error, says why once, and closes; whatever the role waits for ends. */
    void fail(String why) {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        counters.errors.incrementAndGet();
        System.err.println(name + ": " + why);
        ready.completeExceptionally(new IllegalStateException(name + ": " + why));
        onFailed();
        ctx.close();
    }

    /** Sends {@code close} and closes the socket once the broker answers; from any thread. */
    CompletableFuture<Void> close() {
        CompletableFuture<Void> closed = new CompletableFuture<>();
        ctx.channel().closeFuture().addListener(f -> closed.complete(null));
        ctx.executor().execute(() -> {
            closing = true;
            if (state == State.CLOSED || !ctx.channel().isActive()) {
                ctx.close();
                return;
            }
            writeFrame(AmqpFrame.TYPE_AMQP, new Close());
            flush();
        });
        return closed;
    }

    /** A buffer with {@code room} writable bytes, the one writes collect in until {@link #flush}. */
    ByteBuf output(int room) {
        if (output != null && output.writableBytes() < room) {
            ctx.write(output, ctx.voidPromise());
            output = null;
        }
        if (output == null) {
            output = ctx.alloc().directBuffer(Math.max(OUTPUT_SIZE, room));
        }
        return output;
    }

    /** Writes a performative that is not one of the codec's fast ones (through proton-j). */
    void writeFrame(int type, Object performative) {
        PerformativeCodec.writeFrame(output(1024), type, 0, performative, 0);
    }

    /** Hands what has collected to the channel and flushes it. */
    void flush() {
        if (output != null) {
            ctx.write(output, ctx.voidPromise());
            output = null;
        }
        ctx.flush();
    }
}
