package io.skiffmq.server.auth;

import io.skiffmq.server.logging.SummarizedLog;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.qpid.proton.amqp.Symbol;

/**
 * Server side of SASL [5.3] for both protocols: {@code PLAIN} (RFC 4616) against the {@link UserStore};
 * {@code ANONYMOUS}, which logs in as a configured user with that user's restrictions (RabbitMQ 4's
 * {@code anonymous_login_user}: guest by default, so from loopback only); and {@code EXTERNAL}, the user named by
 * the verified TLS client certificate (offered only when there is one). All complete in one step.
 *
 * <p>A login runs in two parts: the connection reads the client's response into {@link Credentials} on its loop,
 * then {@link #login} checks them on an authentication thread ({@link AuthExecutor}), never on a loop, after the
 * failed-login rate limit ({@link FailedLogins}) has had its say. Failures are logged ({@link LoginLog}).
 * Thread-safe; one per listener, closed with it.
 */
public final class SaslAuthenticator implements AutoCloseable {
    public static final String PLAIN = "PLAIN";
    public static final String ANONYMOUS = "ANONYMOUS";
    public static final String EXTERNAL = "EXTERNAL";
    /** The user a connection without SASL ({@code allow-plain-amqp}) runs as. */
    public static final String ANONYMOUS_USER = "anonymous";

    private final UserStore users;
    /** The user ANONYMOUS logs in as; null when ANONYMOUS is not offered. */
    private final String anonymousUser;
    private final AuthSettings settings;
    private final AuthExecutor executor;
    private final FailedLogins failures;
    private final LoginLog log;
    private final AtomicLong checks = new AtomicLong();

    public SaslAuthenticator(UserStore users, String anonymousUser) {
        this(users, anonymousUser, AuthSettings.defaults());
    }

    public SaslAuthenticator(UserStore users, String anonymousUser, AuthSettings settings) {
        this(users, anonymousUser, settings, new AuthExecutor(settings.threads(), settings.queue()));
    }

    /**
     * One that checks logins on the calling thread: for a connection on an embedded channel in tests, whose loop
     * is the test's thread; never for a listener, whose loops must not hash.
     */
    public static SaslAuthenticator inline(UserStore users, String anonymousUser) {
        return new SaslAuthenticator(users, anonymousUser, AuthSettings.defaults(), AuthExecutor.inline());
    }

    private SaslAuthenticator(UserStore users, String anonymousUser, AuthSettings settings, AuthExecutor executor) {
        this.users = users;
        this.anonymousUser = anonymousUser;
        this.settings = settings;
        this.executor = executor;
        this.failures = new FailedLogins(settings.failureRate(), settings.failureBurst(), System::nanoTime);
        this.log = new LoginLog(System::nanoTime, SummarizedLog.JDK_TIMER);
    }

    /** The mechanisms offered, as AMQP 1.0's {@code sasl-mechanisms} lists them. */
    public Symbol[] mechanisms(X509Certificate peer) {
        return java.util.Arrays.stream(mechanismNames(peer)).map(Symbol::valueOf).toArray(Symbol[]::new);
    }

    /** The mechanisms offered: EXTERNAL first when the client presented a verified certificate. */
    public String[] mechanismNames(X509Certificate peer) {
        java.util.List<String> names = new java.util.ArrayList<>(3);
        if (peer != null) {
            names.add(EXTERNAL);
        }
        names.add(PLAIN);
        if (anonymousUser != null) {
            names.add(ANONYMOUS);
        }
        return names.toArray(String[]::new);
    }

    /** True when ANONYMOUS is offered. */
    public boolean anonymousOffered() {
        return anonymousUser != null;
    }

    /**
     * Reads a one-step mechanism's response as the client named it, on any thread (cheap, no checking).
     *
     * @param response the client's response; null when it sent none
     * @param peer the verified client certificate, or null
     * @return the credentials, or null for a mechanism we do not offer (the protocol says how it refuses that)
     */
    public Credentials read(String mechanism, byte[] response, X509Certificate peer) {
        if (ANONYMOUS.equals(mechanism)) {
            return anonymousUser == null ? null : new Credentials(mechanism, anonymousUser, null);
        }
        if (EXTERNAL.equals(mechanism)) {
            // the response, if any, is an authorization identity we do not take: the certificate decides
            return peer == null ? null
                : new Credentials(mechanism, PeerCertificate.user(peer, settings.externalUserFrom()), null);
        }
        if (!PLAIN.equals(mechanism)) {
            return null;
        }
        if (response == null) {
            return Credentials.malformed(mechanism);
        }
        // authzid NUL authcid NUL passwd
        String text = new String(response, StandardCharsets.UTF_8);
        int first = text.indexOf('\0');
        int second = first < 0 ? -1 : text.indexOf('\0', first + 1);
        if (second < 0) {
            return Credentials.malformed(mechanism);
        }
        return new Credentials(mechanism, text.substring(first + 1, second), text.substring(second + 1));
    }

    /**
     * Checks {@code credentials} for a client at {@code remote} on an authentication thread. The future completes
     * there (the caller hops back to its loop); it never fails: a refusal is a {@link LoginResult} too. Logins from
     * an address over the failed-login rate limit are refused at once, unchecked; when every authentication thread
     * is busy and the queue full, at once as {@code BUSY}.
     */
    public CompletableFuture<LoginResult> login(Credentials credentials, InetAddress remote) {
        if (!failures.allowed(remote)) {
            log.rateLimited(remote);
            return CompletableFuture.completedFuture(LoginResult.refused(LoginResult.Refusal.RATE_LIMITED));
        }
        return executor.submit(() -> check(credentials, remote)).exceptionally(failure -> {
            if (failure instanceof RejectedExecutionException
                    || failure.getCause() instanceof RejectedExecutionException) {
                log.busy(credentials, remote);
                return LoginResult.refused(LoginResult.Refusal.BUSY);
            }
            throw new IllegalStateException("checking " + credentials + " failed", failure);
        });
    }

    /** Runs on an authentication thread. */
    private LoginResult check(Credentials credentials, InetAddress remote) {
        checks.incrementAndGet();
        String user = credentials.user();
        boolean known = user != null && switch (credentials.mechanism()) {
            case ANONYMOUS, EXTERNAL -> users.exists(user);
            default -> credentials.password() != null && users.passwordMatches(user, credentials.password());
        };
        if (known && users.mayConnectFrom(user, remote)) {
            return LoginResult.ok(user);
        }
        failures.failed(remote);
        if (known) {
            // RabbitMQ checks the loopback rule after the credentials, and says so: the client had them right
            log.loopbackOnly(credentials, remote);
            return LoginResult.loopbackOnly(user);
        }
        log.failed(credentials, remote);
        return LoginResult.refused(LoginResult.Refusal.CREDENTIALS);
    }

    /** Credentials checked so far (logins refused by the rate limit or as busy are not). */
    public long checks() {
        return checks.get();
    }

    @Override
    public void close() {
        executor.close();
    }
}
