package io.skiffmq.server.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.util.regex.Pattern;

/**
 * Waits for a listening socket to bind. A port that cannot be bound (in use, a privileged port, an address this host
 * does not have) stops the start with one line naming the address and the setting that chose it, which
 * {@link io.skiffmq.server.SkiffMq} prints without a stack trace.
 */
public final class PortBinding {
    private static final Pattern NATIVE_PREFIX = Pattern.compile("^bind\\(\\.\\.\\) failed[^:]*: ");

    private PortBinding() {
    }

    /**
     * The bound channel.
     *
     * @throws IllegalStateException naming {@code host:port}, {@code setting} and the reason, when the bind failed
     */
    public static Channel await(ChannelFuture bind, String host, int port, String setting)
            throws InterruptedException {
        bind.await();
        if (bind.isSuccess()) {
            return bind.channel();
        }
        throw refused(host, port, setting, bind.cause());
    }

    /**
     * Binds and closes a socket on {@code host:port}, for a port that a library binds where its failure would not
     * name the setting (Ratis' gRPC server on {@code cluster-port} ends the process with a stack trace).
     *
     * @throws IllegalStateException as {@link #await} does, when the port cannot be bound now
     */
    public static void probe(String host, int port, String setting) {
        try (java.net.ServerSocket socket = new java.net.ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new java.net.InetSocketAddress(host, port));
        } catch (java.io.IOException e) {
            throw refused(host, port, setting, e);
        }
    }

    private static IllegalStateException refused(String host, int port, String setting, Throwable cause) {
        // epoll says "bind(..) failed with error(-98): Address already in use", NIO "Address already in use"
        String reason = NATIVE_PREFIX.matcher(String.valueOf(cause.getMessage())).replaceFirst("");
        String fix = reason.contains("in use") ? "stop what holds it, or set " + setting + " to another port"
            : "set " + setting + " (or bind) to one this process may use";
        return new IllegalStateException("cannot listen on " + host + ":" + port + " (" + setting + "): " + reason
            + "; " + fix, cause);
    }
}
