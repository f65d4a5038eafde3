package io.skiffmq.server.auth;

import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Logs refused logins: each failure on its own line (user, source address, mechanism, never the password), and
 * logins refused by the rate limit as a summary, one line with their count at most every
 * {@link #SUMMARY_INTERVAL_NANOS}, so a storm does not flood the log. Thread-safe.
 */
final class LoginLog {
    private static final System.Logger LOG = System.getLogger(LoginLog.class.getName());
    static final long SUMMARY_INTERVAL_NANOS = 5_000_000_000L;

    private final LongSupplier nanoClock;
    private final AtomicLong suppressed = new AtomicLong();
    private final AtomicLong lastSummary;

    LoginLog(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.lastSummary = new AtomicLong(nanoClock.getAsLong() - SUMMARY_INTERVAL_NANOS);
    }

    void failed(Credentials credentials, InetAddress remote) {
        LOG.log(System.Logger.Level.WARNING, "{0} login refused: user ''{1}'' from {2} - invalid credentials",
            credentials.mechanism(), credentials.user() == null ? "(unreadable)" : credentials.user(),
            remote.getHostAddress());
    }

    void busy(Credentials credentials, InetAddress remote) {
        LOG.log(System.Logger.Level.WARNING, "{0} login of user ''{1}'' from {2} refused: every authentication "
            + "thread is busy and the auth-queue is full", credentials.mechanism(), credentials.user(),
            remote.getHostAddress());
    }

    /** One more login refused by the rate limit: counted, and the count logged once the interval has passed. */
    void rateLimited(InetAddress remote) {
        suppressed.incrementAndGet();
        long now = nanoClock.getAsLong();
        long last = lastSummary.get();
        if (now - last >= SUMMARY_INTERVAL_NANOS && lastSummary.compareAndSet(last, now)) {
            long count = suppressed.getAndSet(0);
            LOG.log(System.Logger.Level.WARNING, "{0} login attempt(s) refused over the failed-login rate limit "
                + "(login-failure-rate, login-failure-burst) in the last {1} s, the latest from {2}",
                Long.toString(count), Long.toString(Math.min((now - last) / 1_000_000_000L, 3600)),
                remote.getHostAddress());
        }
    }

    /** Rate-limited logins counted but not logged yet. */
    long suppressed() {
        return suppressed.get();
    }
}
