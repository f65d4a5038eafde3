package io.skiffmq.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * The first stage of an AMQP 1.0 connection: protocol header negotiation [2.2], [5.3.2].
 *
 * <ul>
 *   <li>{@code AMQP 3 1.0.0} (SASL): answered with the same header and {@code sasl-mechanisms}.</li>
 *   <li>{@code AMQP 0 1.0.0}: answered in kind when plain AMQP is allowed; otherwise, like a TLS header, an
 *       unknown protocol or anything that is not a protocol header, answered with the SASL header (the one we
 *       support) and closed, as [2.2] prescribes.</li>
 *   <li>Frames that do not decode close the connection: with a {@code close} carrying the condition in the
 *       AMQP phase, by closing the socket in the SASL phase (SASL has no error frame).</li>
 * </ul>
 *
 * Authentication and the connection state machine (open, sessions, links) are not part of this build: a
 * {@code sasl-init} is answered with the permanent system error outcome, an {@code open} with a {@code close}
 * carrying {@code amqp:not-implemented}, and the refusal is logged. Owned by the channel's event loop.
 */
final class HeaderNegotiationHandler extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(HeaderNegotiationHandler.class.getName());
    private static final String NOT_IMPLEMENTED = "this SkiffMQ build negotiates protocol headers only; "
        + "AMQP 1.0 connections arrive with the server issue";

    private final boolean allowPlainAmqp;
    private final PerformativeCodec codec = new PerformativeCodec();
    private ProtocolHeader phase;

    HeaderNegotiationHandler(boolean allowPlainAmqp) {
        this.allowPlainAmqp = allowPlainAmqp;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws AmqpDecodeException {
        if (msg instanceof ProtocolHeader header) {
            if (phase == ProtocolHeader.SASL) {
                // [5.3.2] the AMQP header follows a successful sasl-outcome, which this build never sends
                LOG.log(System.Logger.Level.INFO, "closing {0}: AMQP header before SASL succeeded",
                    ctx.channel().remoteAddress());
                ctx.close();
                return;
            }
            phase = header;
            ByteBuf out = ctx.alloc().buffer(64);
            header.writeTo(out);
            if (header == ProtocolHeader.SASL) {
                SaslMechanisms mechanisms = new SaslMechanisms();
                mechanisms.setSaslServerMechanisms(Symbol.valueOf("PLAIN"));
                PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_SASL, 0, mechanisms, 0);
            }
            ctx.write(out);
            return;
        }
        AmqpFrame frame = (AmqpFrame) msg;
        try {
            if (frame.isEmpty()) {
                return;
            }
            if (frame.type() == AmqpFrame.TYPE_SASL) {
                onSaslFrame(ctx, frame);
            } else {
                onAmqpFrame(ctx, frame);
            }
        } finally {
            frame.release();
        }
    }

    private void onSaslFrame(ChannelHandlerContext ctx, AmqpFrame frame) throws AmqpDecodeException {
        Object body = codec.decodeSasl(frame.content());
        if (body instanceof SaslInit init) {
            LOG.log(System.Logger.Level.WARNING, "refusing {0} from {1}: {2}", init.getMechanism(),
                ctx.channel().remoteAddress(), NOT_IMPLEMENTED);
            SaslOutcome outcome = new SaslOutcome();
            outcome.setCode(SaslCode.SYS_PERM);
            ByteBuf out = ctx.alloc().buffer(32);
            PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_SASL, 0, outcome, 0);
            ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void onAmqpFrame(ChannelHandlerContext ctx, AmqpFrame frame) throws AmqpDecodeException {
        Object performative = codec.decode(frame.content());
        if (performative instanceof Open) {
            LOG.log(System.Logger.Level.WARNING, "refusing open from {0}: {1}", ctx.channel().remoteAddress(),
                NOT_IMPLEMENTED);
            closeWith(ctx, AmqpError.NOT_IMPLEMENTED, NOT_IMPLEMENTED);
        }
    }

    /** [2.4.2] a connection error before our open is answered with open, then close carrying the error. */
    private void closeWith(ChannelHandlerContext ctx, AmqpError condition, String description) {
        ByteBuf out = ctx.alloc().buffer(128);
        Open open = new Open();
        open.setContainerId("skiffmq");
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, open, 0);
        Close close = new Close();
        close.setError(new ErrorCondition(condition.symbol(), description));
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, close, 0);
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (!(root instanceof AmqpDecodeException decode)) {
            LOG.log(System.Logger.Level.ERROR, "closing " + ctx.channel().remoteAddress() + " after an internal error",
                root);
            ctx.close();
            return;
        }
        LOG.log(System.Logger.Level.INFO, "closing {0}: {1}", ctx.channel().remoteAddress(), decode.getMessage());
        switch (decode.failure()) {
            case BAD_PROTOCOL_HEADER, UNSUPPORTED_PROTOCOL -> {
                ByteBuf out = ctx.alloc().buffer(8);
                ProtocolHeader.SASL.writeTo(out);
                ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
            }
            default -> {
                if (phase == ProtocolHeader.AMQP) {
                    closeWith(ctx, decode.condition(), decode.getMessage());
                } else {
                    ctx.close();
                }
            }
        }
    }
}
