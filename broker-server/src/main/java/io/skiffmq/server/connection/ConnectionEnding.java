package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * One connection's end, decided once: the first of {@link #end}, {@link #failed} or {@link #inactive} says how the
 * connection ends, counts it and logs its line ({@link ConnectionEnds}); every later call is a no-op (no second line,
 * no second close), except that a broker bug found after the end is still logged at ERROR. Kept on the channel
 * ({@link #of}), so the protocol detector, TLS and the protocol's handler share it. Owned by the channel's event
 * loop; not thread-safe.
 */
public final class ConnectionEnding {
    private static final System.Logger LOG = System.getLogger(ConnectionEnding.class.getName());
    private static final AttributeKey<ConnectionEnding> KEY = AttributeKey.valueOf(ConnectionEnding.class.getName());

    private final Channel channel;
    private final ConnectionEnds ends;
    private ConnectionEnd end;

    private ConnectionEnding(Channel channel, ConnectionEnds ends) {
        this.channel = channel;
        this.ends = ends;
    }

    /** The channel's ending, made on first use. */
    public static ConnectionEnding of(Channel channel, ConnectionEnds ends) {
        ConnectionEnding ending = channel.attr(KEY).get();
        if (ending == null) {
            ending = new ConnectionEnding(channel, ends);
            channel.attr(KEY).set(ending);
        }
        return ending;
    }

    /** True once the connection's end is decided. */
    public boolean ended() {
        return end != null;
    }

    /** How the connection ended; null while it has not. */
    public ConnectionEnd end() {
        return end;
    }

    /**
     * Decides the end, if nothing did before: counts and logs it.
     *
     * @return true when this call decided it (the caller closes); false when the connection had already ended
     */
    public boolean end(ConnectionEnd how, String detail) {
        return decide(how, detail, null);
    }

    /**
     * An exception reached the connection: it is classified ({@link ConnectionEnd#of}) and ends the connection if
     * nothing did before. I/O failures after the end (a write that found the socket closed, a reset after our close)
     * are only logged at DEBUG; an internal error is logged at ERROR with its stack even then.
     *
     * @return how the exception ends the connection, or null when it had already ended (the caller does nothing)
     */
    public ConnectionEnd failed(Throwable cause) {
        ConnectionEnd how = ConnectionEnd.of(cause);
        String detail = how == ConnectionEnd.INTERNAL_ERROR ? "internal error: " + cause : describe(cause);
        if (decide(how, detail, cause)) {
            return how;
        }
        if (how == ConnectionEnd.INTERNAL_ERROR) {
            LOG.log(System.Logger.Level.ERROR, "connection " + name() + ": internal error after the connection ended ("
                + end.label() + ")", cause);
        } else if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
            LOG.log(System.Logger.Level.DEBUG, "connection {0}: {1} after the connection ended ({2})", name(),
                describe(cause), end.label());
        }
        return null;
    }

    /** The socket closed: if nothing ended the connection before, the peer went away ({@link ConnectionEnd#EOF}). */
    public void inactive() {
        decide(ConnectionEnd.EOF, "the peer closed the socket", null);
    }

    private boolean decide(ConnectionEnd how, String detail, Throwable cause) {
        if (end != null) {
            return false;
        }
        end = how;
        ends.record(how, name(), detail, cause, channel.eventLoop());
        return true;
    }

    private String name() {
        return ConnectionName.of(channel);
    }

    /** An exception as one line without a stack: its class and message, and its cause's if it wraps one. */
    static String describe(Throwable cause) {
        Throwable root = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
            ? cause.getCause() : cause;
        return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
    }
}
