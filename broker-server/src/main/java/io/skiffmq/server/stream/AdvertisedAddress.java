package io.skiffmq.server.stream;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * The host and port {@code open} and {@code metadata} advertise, which must be the same or the Java client
 * reconnects for ever: the settings ({@code stream-advertised-*}, the TLS ones on the TLS port), or the address the
 * client reached. Any thread.
 */
final class AdvertisedAddress {
    private AdvertisedAddress() {
    }

    static String host(StreamSettings settings, boolean tls, Channel channel) {
        String configured = tls && settings.advertisedTlsHost() != null ? settings.advertisedTlsHost()
            : settings.advertisedHost();
        if (configured != null) {
            return configured;
        }
        InetSocketAddress local = (InetSocketAddress) channel.localAddress();
        return local.getAddress() == null ? local.getHostString() : local.getAddress().getHostAddress();
    }

    static int port(StreamSettings settings, boolean tls, Channel channel) {
        int configured = tls ? settings.advertisedTlsPort() : settings.advertisedPort();
        return configured != StreamSettings.NO_PORT ? configured : ((InetSocketAddress) channel.localAddress()).getPort();
    }
}
