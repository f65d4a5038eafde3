package io.skiffmq.server.auth;

/**
 * How a login ended: the user, or why it was refused. Immutable.
 *
 * @param user the authenticated user; null when refused
 * @param refusal null when the login succeeded
 * @param reason the refusal in words, for the log and, where a protocol has room for it, the client; null when the
 *        login succeeded
 */
public record LoginResult(String user, Refusal refusal, String reason) {
    /** Why a login was refused; each protocol says it its own way. */
    public enum Refusal {
        /** Wrong password, unknown user, a mechanism not offered: no details given. */
        CREDENTIALS,
        /**
         * Right credentials, but the user is one of the {@code loopback-users} and came from elsewhere. Said as such
         * (RabbitMQ's "user '~ts' can only connect via localhost"): only a client that had the password learns it.
         */
        LOOPBACK_ONLY,
        /** Too many failed logins from this address lately: refused before any checking. */
        RATE_LIMITED,
        /** Every authentication thread is busy and the queue full: try again later. */
        BUSY
    }

    static LoginResult ok(String user) {
        return new LoginResult(user, null, null);
    }

    /** A refusal of the kinds that need no user named: every one but {@link Refusal#LOOPBACK_ONLY}. */
    public static LoginResult refused(Refusal refusal) {
        return new LoginResult(null, refusal, switch (refusal) {
            case CREDENTIALS -> "invalid credentials";
            case RATE_LIMITED -> "too many failed logins from this address";
            case BUSY -> "every authentication thread is busy";
            case LOOPBACK_ONLY -> throw new IllegalArgumentException("a loopback-only refusal names its user");
        });
    }

    /** {@code user}, whose credentials were right, may log in from loopback addresses only. */
    static LoginResult loopbackOnly(String user) {
        return new LoginResult(null, Refusal.LOOPBACK_ONLY, "user '" + user + "' can only connect via localhost");
    }

    public boolean succeeded() {
        return refusal == null;
    }
}
