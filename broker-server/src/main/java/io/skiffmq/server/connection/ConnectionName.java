package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * A connection's name as RabbitMQ gives it, {@code 127.0.0.1:54321 -> 127.0.0.1:5672}: the peer's address and port,
 * then ours. Every log line about a connection (accepted, admitted, closing, closed, failed) starts its message with
 * it, so one {@code grep} of the peer address finds a connection's whole story. Stateless.
 */
public final class ConnectionName {
    private ConnectionName() {
    }

    public static String of(Channel channel) {
        return address(channel.remoteAddress()) + " -> " + address(channel.localAddress());
    }

    private static String address(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            String host = inet.getAddress() == null ? inet.getHostString() : inet.getAddress().getHostAddress();
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }
}
