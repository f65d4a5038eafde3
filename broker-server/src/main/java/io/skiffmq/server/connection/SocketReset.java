package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;

/**
 * Closes a connection's socket with a reset, for a close after which nothing more needs to reach the peer (it went
 * silent, its close-ok never came, the network failed): {@code SO_LINGER} 0, so the kernel drops what it still holds
 * for the peer and sends RST instead of a FIN queued behind it. A peer that stopped reading, its receive window
 * full, would otherwise never see the FIN (the socket stays in FIN-WAIT-1 behind megabytes nobody reads) and keep
 * the connection for dead only when its own writes fail. RabbitMQ's listener sockets are {@code {linger, {true, 0}}}
 * for this ({@code tcp_listen_options}), and {@code rabbit_net:fast_close/1} closes with them.
 *
 * <p>Graceful closes (close-ok after the peer's close, the lingering close after it) do not use this: the peer closes
 * first there. Stateless; call on the channel's event loop.
 */
public final class SocketReset {
    private SocketReset() {
    }

    /** Sets {@code SO_LINGER} 0 (where the channel is a TCP socket still open) and closes. */
    public static ChannelFuture close(Channel channel) {
        if (channel.isOpen()) {
            try {
                channel.config().setOption(ChannelOption.SO_LINGER, 0);
            } catch (ChannelException e) {
                // closed meanwhile (the option cannot be set on it): nothing is left to drop
            }
        }
        return channel.close();
    }
}
