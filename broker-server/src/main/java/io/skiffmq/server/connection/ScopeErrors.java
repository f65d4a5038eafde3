package io.skiffmq.server.connection;

import io.skiffmq.server.logging.SummarizedLog;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * The broker's log of errors that end less than a connection: an AMQP 1.0 session ended or a link detached with an
 * error, a 0-9-1 channel closed by the broker. One the peer caused (a queue that does not exist, a frame out of
 * place) is an INFO line without a stack, limited per scope as connection ends are ({@link ConnectionEnds#LINES_PER_SECOND},
 * a burst of {@link ConnectionEnds#BURST}, a timed summary: {@link SummarizedLog}); a broker bug is an ERROR line
 * with its stack, never suppressed. Thread-safe: every connection's event loop logs here.
 */
public final class ScopeErrors {
    private static final System.Logger LOG = System.getLogger(ScopeErrors.class.getName());

    /** What the error ended. */
    public enum Scope {
        SESSION("session ended with an error"),
        LINK("link detached with an error"),
        CHANNEL("channel closed by the broker");

        private final String summary;

        Scope(String summary) {
            this.summary = summary;
        }
    }

    private final Map<Scope, SummarizedLog> lines = new EnumMap<>(Scope.class);

    public ScopeErrors() {
        this(System::nanoTime);
    }

    ScopeErrors(LongSupplier nanoClock) {
        for (Scope scope : Scope.values()) {
            lines.put(scope, new SummarizedLog(ConnectionEnds.LINES_PER_SECOND, ConnectionEnds.BURST,
                ConnectionEnds.SUMMARY_DELAY_NANOS, nanoClock,
                suppressed -> LOG.log(System.Logger.Level.INFO, "suppressed {0} similar messages in the last {1} s: "
                    + "{2}", Long.toString(suppressed.count()), SummarizedLog.seconds(suppressed.windowNanos()),
                    scope.summary)));
        }
    }

    /**
     * Logs one error: {@code connection CONNECTION: WHAT: DETAIL}.
     *
     * @param what what ends, as the line says it ({@code ending session 1}, {@code detaching link 0})
     * @param bug the broker's fault (an internal error) rather than the peer's
     * @param cause the bug's exception, logged with its stack; null when there is none or it is not a bug
     * @param loop the connection's event loop, which runs the summary
     */
    public void log(Scope scope, String connection, String what, String detail, boolean bug, Throwable cause,
            ScheduledExecutorService loop) {
        String line = "connection " + connection + ": " + what + ": " + detail;
        if (bug) {
            LOG.log(System.Logger.Level.ERROR, line, cause);
        } else if (LOG.isLoggable(System.Logger.Level.INFO) && lines.get(scope).admit(SummarizedLog.on(loop))) {
            LOG.log(System.Logger.Level.INFO, line);
        }
    }
}
