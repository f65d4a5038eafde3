package io.skiffmq.server.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.connection.ConnectionEnds;
import java.util.List;

/**
 * Sits before the TLS handler on the AMQPS port and looks at the first bytes a client sends: a plain {@code AMQP}
 * protocol header there (a client configured without TLS) ends the connection at once as {@code tls_error}, "plain
 * AMQP on the TLS port", where the TLS handler would take {@code AMQP} for the start of an SSLv2 hello and wait for
 * the rest of it until the handshake timeout. Anything else (a TLS record starts with 0x16, an SSLv2 hello with its
 * high bit set) is passed on untouched as soon as its first byte differs from {@code AMQP}, and the handler removes
 * itself. Owned by the channel's event loop.
 */
final class PlainAmqpOnTlsPort extends ByteToMessageDecoder {
    private static final byte[] AMQP = {'A', 'M', 'Q', 'P'};

    private final ConnectionEnds ends;

    PlainAmqpOnTlsPort(ConnectionEnds ends) {
        this.ends = ends;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int seen = Math.min(in.readableBytes(), AMQP.length);
        for (int i = 0; i < seen; i++) {
            if (in.getByte(start + i) != AMQP[i]) {
                // not plain AMQP: TLS's to judge; removing the decoder hands it what was read
                ctx.pipeline().remove(this);
                return;
            }
        }
        if (seen < AMQP.length) {
            return; // "A", "AM", "AMQ": wait for the fourth byte (the handshake timeout bounds the wait)
        }
        in.skipBytes(in.readableBytes());
        if (ConnectionEnding.of(ctx.channel(), ends).end(ConnectionEnd.TLS_ERROR,
                "plain AMQP on the TLS port (a protocol header, not a TLS record)")) {
            ctx.close();
        }
    }
}
