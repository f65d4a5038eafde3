package io.skiffmq.server.connection;

import io.skiffmq.server.logging.SummarizedLog;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The broker's record of how connections end: a count per {@link ConnectionEnd} (the metrics'
 * {@code skiffmq_connection_ends_total{reason}}, whose sum is {@code rabbitmq_connections_closed_total}) and the
 * one log line each end gets, limited per end to {@link #LINES_PER_SECOND} (a burst of {@link #BURST}) with one
 * summary line {@link #SUMMARY_DELAY_NANOS} after the first suppressed one. Internal errors are never suppressed.
 * Thread-safe: every connection's event loop records here.
 */
public final class ConnectionEnds {
    private static final System.Logger LOG = System.getLogger(ConnectionEnds.class.getName());
    /**
     * Lines a second per end in the long run, and at once: a flood of bad connections (a scanner, a client in a
     * reconnect loop) shows as a few lines a second and a count, so the lines of other ends are still readable.
     */
    public static final int LINES_PER_SECOND = 5;
    public static final int BURST = 5;
    /** How long after the first suppressed line its summary comes: the failed-login summary's interval. */
    public static final long SUMMARY_DELAY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Map<ConnectionEnd, LongAdder> counts = new EnumMap<>(ConnectionEnd.class);
    private final Map<ConnectionEnd, SummarizedLog> lines = new EnumMap<>(ConnectionEnd.class);

    public ConnectionEnds() {
        this(System::nanoTime);
    }

    ConnectionEnds(LongSupplier nanoClock) {
        for (ConnectionEnd end : ConnectionEnd.values()) {
            counts.put(end, new LongAdder());
            lines.put(end, new SummarizedLog(LINES_PER_SECOND, BURST, SUMMARY_DELAY_NANOS, nanoClock,
                suppressed -> LOG.log(end.level(), "suppressed {0} similar messages in the last {1} s: connection "
                    + "closed ({2})", Long.toString(suppressed.count()),
                    SummarizedLog.seconds(suppressed.windowNanos()), end.label())));
        }
    }

    /**
     * Counts one end and logs its line, {@code connection NAME: closed (LABEL): DETAIL}, unless the end's limit
     * suppresses it; the first suppressed line has the summary scheduled on {@code scheduler}.
     *
     * @param cause logged with its stack for an internal error; null otherwise
     */
    void record(ConnectionEnd end, String connection, String detail, Throwable cause,
            ScheduledExecutorService scheduler) {
        counts.get(end).increment();
        if (!LOG.isLoggable(end.level())) {
            return;
        }
        if (end.limited() && !lines.get(end).admit(SummarizedLog.on(scheduler))) {
            return;
        }
        String line = "connection " + connection + ": closed (" + end.label() + "): " + detail;
        if (cause != null && end == ConnectionEnd.INTERNAL_ERROR) {
            LOG.log(end.level(), line, cause);
        } else {
            LOG.log(end.level(), line);
        }
    }

    /** The summary of an end's suppressed lines, if any. */
    void summarize(ConnectionEnd end) {
        lines.get(end).summarize();
    }

    /** Connections that ended this way since the broker started. */
    public long count(ConnectionEnd end) {
        return counts.get(end).sum();
    }

    /** Connections that ended, all ways together. */
    public long total() {
        long total = 0;
        for (LongAdder count : counts.values()) {
            total += count.sum();
        }
        return total;
    }
}
