package io.skiffmq.server.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.skiffmq.codec.amqp091.Amqp091ProtocolHeader;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.connection.ConnectionEnds;
import io.skiffmq.server.connection.HandshakeDeadline;
import java.util.List;

/**
 * Tells the protocols sharing a port apart by the 8-byte protocol header the client sends first, then replaces
 * itself with that protocol's handlers, handing them what it read:
 * <ul>
 * <li>{@code AMQP 0 0 9 1}, or 0-9's {@code AMQP 1 1 0 9} (as RabbitMQ takes it) → AMQP 0-9-1 (the header is
 *     consumed: its handler starts with {@code connection.start});</li>
 * <li>{@code AMQP} then protocol id 0, 2 or 3 and major version 1 → AMQP 1.0, whose handler answers the header
 *     (or the AMQP 1.0 header it supports, for other 1.0 variants);</li>
 * <li>any other {@code AMQP} header (0-8, 0-9, 0-10, …) → the {@code AMQP 0 0 9 1} header and a close, as the 0-9-1
 *     spec asks [4.2.2];</li>
 * <li>anything else (HTTP, TLS, garbage) → AMQP 1.0, which answers with its own header and closes (where 0-9-1 is
 *     the only protocol, the 0-9-1 header).</li>
 * </ul>
 * A client that sends fewer than 8 bytes is closed after the handshake timeout. Owned by the channel's event loop.
 */
final class ProtocolDetector extends ByteToMessageDecoder {
    private static final byte[] AMQP = {'A', 'M', 'Q', 'P'};

    /** Installs one protocol's handlers after the detector. */
    interface Protocol {
        void install(ChannelHandlerContext detector);
    }

    private final Protocol amqp10;
    private final Protocol amqp091;
    private final long handshakeTimeoutMillis;
    private final ConnectionEnds ends;
    private ScheduledFuture<?> timeout;

    /**
     * @param amqp10 null on a port that speaks AMQP 0-9-1 only
     * @param ends where a connection that ends here (no header, a bad one, a failed TLS handshake) is recorded
     */
    ProtocolDetector(Protocol amqp10, Protocol amqp091, long handshakeTimeoutMillis, ConnectionEnds ends) {
        this.amqp10 = amqp10;
        this.amqp091 = amqp091;
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        this.ends = ends;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        timeout = HandshakeDeadline.schedule(ctx.channel(), handshakeTimeoutMillis, () -> {
            if (ending(ctx).end(ConnectionEnd.HANDSHAKE_TIMEOUT,
                    "no protocol header within " + handshakeTimeoutMillis + " ms")) {
                ctx.close();
            }
        });
        // the protocol's handlers hear of the channel once they are installed
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int seen = Math.min(in.readableBytes(), 8);
        boolean amqpPrefix = true;
        for (int i = 0; i < Math.min(seen, 4); i++) {
            amqpPrefix &= in.getByte(start + i) == AMQP[i];
        }
        if (!amqpPrefix) {
            choose(ctx, amqp10);
            return;
        }
        if (seen < 8) {
            return;
        }
        if (Amqp091ProtocolHeader.matches(in, start) || isAmqp09(in, start)) {
            in.skipBytes(Amqp091ProtocolHeader.LENGTH);
            choose(ctx, amqp091);
            return;
        }
        int id = in.getUnsignedByte(start + 4);
        int major = in.getUnsignedByte(start + 5);
        boolean amqp10Header = major == 1 && (id == 0 || id == 2 || id == 3);
        choose(ctx, amqp10Header && amqp10 != null ? amqp10 : null);
    }

    /** {@code AMQP 1 1 0 9}: 0-9, which RabbitMQ safely treats as 0-9-1 (connection.start then says 0-9 anyway). */
    private static boolean isAmqp09(ByteBuf in, int start) {
        return in.getByte(start + 4) == 1 && in.getByte(start + 5) == 1 && in.getByte(start + 6) == 0
            && in.getByte(start + 7) == 9;
    }

    /** Hands the connection to {@code protocol}, or answers with the 0-9-1 header and closes when it is null. */
    private void choose(ChannelHandlerContext ctx, Protocol protocol) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        if (protocol == null) {
            ByteBuf in = internalBuffer();
            in.skipBytes(in.readableBytes());
            ending(ctx).end(ConnectionEnd.PROTOCOL_ERROR, "unsupported protocol header");
            ByteBuf header = ctx.alloc().buffer(Amqp091ProtocolHeader.LENGTH);
            Amqp091ProtocolHeader.write(header);
            ctx.writeAndFlush(header).addListener(ChannelFutureListener.CLOSE);
            ctx.pipeline().remove(this);
            return;
        }
        protocol.install(ctx);
        ctx.fireChannelActive();
        // removing a ByteToMessageDecoder passes what it holds (the rest of the first read) to the next handler
        ctx.pipeline().remove(this);
    }

    /**
     * Before a protocol is chosen, a failure (a TLS handshake that failed, a reset) just closes the connection, as
     * its {@link ConnectionEnd} says.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (ending(ctx).failed(cause) != null) {
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timeout != null) {
            timeout.cancel(false);
        }
        super.channelInactive(ctx);
        ending(ctx).inactive();
    }

    private ConnectionEnding ending(ChannelHandlerContext ctx) {
        return ConnectionEnding.of(ctx.channel(), ends);
    }
}
