package io.skiffmq.server.connection;

import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import javax.net.ssl.SSLException;

/**
 * Every way a client connection ends, for either protocol, with the level its one log line has
 * ({@link ConnectionEnding} logs it, {@link ConnectionEnds} counts it and limits the lines):
 * <ul>
 * <li>a broker bug ({@link #INTERNAL_ERROR}) at ERROR with its stack, never suppressed: the one end to alert on;</li>
 * <li>what a peer did or failed to do (a protocol error, a reset, a timeout, a refused login, a limit) at INFO
 *     without a stack, at most {@link ConnectionEnds#LINES_PER_SECOND} lines a second per end;</li>
 * <li>plain disconnects ({@link #CLIENT_CLOSE}, {@link #EOF}) at DEBUG.</li>
 * </ul>
 * The label names the end in the log and in {@code skiffmq_connection_ends_total{reason=…}}. Stateless.
 */
public enum ConnectionEnd {
    /** The client closed properly: AMQP 1.0 {@code close} without an error, 0-9-1 {@code connection.close} 200. */
    CLIENT_CLOSE("client_close", Level.DEBUG),
    /** The client closed properly but with an error condition (1.0) or a reply code other than 200 (0-9-1). */
    CLIENT_ERROR("client_error", Level.INFO),
    /** The socket closed (end of stream) before any close exchange. */
    EOF("eof", Level.DEBUG),
    /** A network error: connection reset by the peer, broken pipe, any other I/O failure. */
    RESET("reset", Level.INFO),
    /** A write failed because the socket was already closed by the time it was written. */
    WRITE_AFTER_CLOSE("write_after_close", Level.DEBUG),
    /** No protocol header, handshake or {@code open} within {@code handshake-timeout}. */
    HANDSHAKE_TIMEOUT("handshake_timeout", Level.INFO),
    /** No frame within the negotiated idle timeout (1.0) or two heartbeat intervals (0-9-1). */
    IDLE_TIMEOUT("idle_timeout", Level.INFO),
    /** The TLS handshake failed or a TLS record was bad. */
    TLS_ERROR("tls_error", Level.INFO),
    /** Bytes that are not the protocol, or a frame or method out of place: the peer's fault. */
    PROTOCOL_ERROR("protocol_error", Level.INFO),
    /** A connection or channel limit, or a frame too large: the peer asked for more than it may have. */
    RESOURCE_LIMIT("resource_limit", Level.INFO),
    /** The login failed. */
    AUTH_FAILURE("auth_failure", Level.INFO),
    /** The user may not use the virtual host, or it does not exist. */
    ACCESS_REFUSED("access_refused", Level.INFO),
    /** The broker is stopping. */
    SERVER_SHUTDOWN("server_shutdown", Level.INFO),
    /** An operator closed it (HTTP API, a deleted user or virtual host). */
    ADMIN_CLOSE("admin_close", Level.INFO),
    /** An exception nothing expected: a bug of ours. */
    INTERNAL_ERROR("internal_error", Level.ERROR);

    private final String label;
    private final Level level;

    ConnectionEnd(String label, Level level) {
        this.label = label;
        this.level = level;
    }

    /** The end's name in the log and the metrics ({@code protocol_error}). */
    public String label() {
        return label;
    }

    /** The level of the end's log line. */
    public Level level() {
        return level;
    }

    /** True for ends whose lines are rate-limited: all but internal errors, which are never suppressed. */
    public boolean limited() {
        return this != INTERNAL_ERROR;
    }

    /**
     * What an exception that reached a connection handler says about how the connection ends. Codec failures
     * ({@code DecoderException} around a decode exception) are the peer's protocol errors; I/O failures are the
     * network's; anything else is ours.
     */
    public static ConnectionEnd of(Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof ClosedChannelException) {
            return WRITE_AFTER_CLOSE;
        }
        if (root instanceof SSLException) {
            return TLS_ERROR;
        }
        if (root instanceof IOException) {
            return RESET;
        }
        if (root instanceof TooLongFrameException) {
            return RESOURCE_LIMIT;
        }
        if (root instanceof io.skiffmq.codec.stream.StreamDecodeException stream) {
            return stream.failure() == io.skiffmq.codec.stream.DecodeFailure.FRAME_TOO_LARGE ? RESOURCE_LIMIT
                : PROTOCOL_ERROR;
        }
        if (root instanceof io.skiffmq.codec.amqp10.AmqpDecodeException
                || root instanceof io.skiffmq.codec.amqp091.Amqp091DecodeException) {
            return PROTOCOL_ERROR;
        }
        return INTERNAL_ERROR;
    }
}
