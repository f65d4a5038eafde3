package io.skiffmq.server.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.FileRegion;
import io.skiffmq.core.alarm.ResourceMonitor;
import io.skiffmq.core.metrics.ConnectionCounters;

/**
 * Counts the AMQP bytes a connection reads and writes (after TLS, so TLS's own overhead is not counted) into its
 * {@link ConnectionCounters}. It sits before the frame decoder; it only looks at buffer sizes and passes everything
 * on untouched. What it reads also goes to the {@link ResourceMonitor}, which checks memory early when much has
 * arrived. Runs on the connection's event loop, like the counters' other writers.
 */
public final class ByteCounter extends ChannelDuplexHandler {
    private final ConnectionCounters counters;
    private final ResourceMonitor monitor;

    public ByteCounter(ConnectionCounters counters, ResourceMonitor monitor) {
        this.counters = counters;
        this.monitor = monitor;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf) {
            int bytes = buf.readableBytes();
            counters.bytesIn(bytes);
            monitor.arrived(bytes);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf buf) {
            counters.bytesOut(buf.readableBytes());
        } else if (msg instanceof FileRegion region) {
            counters.bytesOut(region.count()); // a stream chunk sent from its file
        }
        ctx.write(msg, promise);
    }
}
