package io.skiffmq.server.auth;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The IP address a login comes from, as {@link SaslAuthenticator#login} counts failed logins by it. Stateless.
 */
public final class PeerAddress {
    private PeerAddress() {
    }

    /** The peer's IP address; a channel without one (in-process) counts as loopback. */
    public static InetAddress of(Channel channel) {
        return channel.remoteAddress() instanceof InetSocketAddress remote
            ? remote.getAddress() : InetAddress.getLoopbackAddress();
    }
}
