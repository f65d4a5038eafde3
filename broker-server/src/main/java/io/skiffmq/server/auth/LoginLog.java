package io.skiffmq.server.auth;

import io.skiffmq.server.logging.SummarizedLog;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Logs refused logins: each failure on its own line (user, source address, mechanism, never the password), and
 * logins refused by the rate limit as a summary: the first of a storm on its own line, the rest counted and their
 * count logged by a timer {@link #SUMMARY_INTERVAL_NANOS} after the first one suppressed ({@link SummarizedLog}),
 * so a storm does not flood the log and its last count is logged even when no login follows it. Thread-safe.
 */
final class LoginLog {
    private static final System.Logger LOG = System.getLogger(LoginLog.class.getName());
    static final long SUMMARY_INTERVAL_NANOS = 5_000_000_000L;

    private final SummarizedLog rateLimited;
    private final SummarizedLog.Timer timer;
    /** The address of the latest login refused by the rate limit, for the summary. */
    private final AtomicReference<InetAddress> latest = new AtomicReference<>();

    /**
     * @param timer runs the summaries ({@link SummarizedLog#JDK_TIMER} but in tests)
     */
    LoginLog(LongSupplier nanoClock, SummarizedLog.Timer timer) {
        this.timer = timer;
        this.rateLimited = new SummarizedLog(1e9 / SUMMARY_INTERVAL_NANOS, 1, SUMMARY_INTERVAL_NANOS, nanoClock,
            suppressed -> LOG.log(System.Logger.Level.WARNING, "{0} login attempt(s) refused over the failed-login "
                + "rate limit (login-failure-rate, login-failure-burst) in the last {1} s, the latest from {2}",
                Long.toString(suppressed.count()), SummarizedLog.seconds(suppressed.windowNanos()),
                latest.get().getHostAddress()));
    }

    void failed(Credentials credentials, InetAddress remote) {
        LOG.log(System.Logger.Level.WARNING, "{0} login refused: user ''{1}'' from {2} - invalid credentials",
            credentials.mechanism(), credentials.user() == null ? "(unreadable)" : credentials.user(),
            remote.getHostAddress());
    }

    /** Right credentials from a non-loopback address for one of the {@code loopback-users}. */
    void loopbackOnly(Credentials credentials, InetAddress remote) {
        LOG.log(System.Logger.Level.WARNING, "{0} login refused: user ''{1}'' can only connect via localhost, not "
            + "from {2} (setting loopback-users)", credentials.mechanism(), credentials.user(),
            remote.getHostAddress());
    }

    void busy(Credentials credentials, InetAddress remote) {
        LOG.log(System.Logger.Level.WARNING, "{0} login of user ''{1}'' from {2} refused: every authentication "
            + "thread is busy and the auth-queue is full", credentials.mechanism(), credentials.user(),
            remote.getHostAddress());
    }

    /** One more login refused by the rate limit: logged, or counted for the summary the timer logs. */
    void rateLimited(InetAddress remote) {
        latest.set(remote);
        if (rateLimited.admit(timer)) {
            LOG.log(System.Logger.Level.WARNING, "1 login attempt(s) refused over the failed-login rate limit "
                + "(login-failure-rate, login-failure-burst), from {0}", remote.getHostAddress());
        }
    }
}
