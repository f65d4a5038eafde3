package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import java.util.concurrent.TimeUnit;

/**
 * The idle timeout [2.4.5]: an empty frame whenever we wrote nothing for half the peer's timeout; our own timeout
 * passes on as a {@link IdleState#READER_IDLE} event, on which the connection closes. Owned by the channel's event
 * loop.
 */
final class Heartbeats extends IdleStateHandler {
    /** @param readMillis our idle timeout, 0 for none; @param writeMillis half the peer's, 0 for none */
    Heartbeats(long readMillis, long writeMillis) {
        super(readMillis, writeMillis, 0, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent event) {
        if (event.state() == IdleState.WRITER_IDLE) {
            ByteBuf empty = ctx.alloc().buffer(8);
            PerformativeCodec.writeEmptyFrame(empty);
            ctx.writeAndFlush(empty, ctx.voidPromise());
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }
}
