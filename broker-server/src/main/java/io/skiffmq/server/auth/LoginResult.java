package io.skiffmq.server.auth;

/**
 * How a login ended: the user, or why it was refused. Immutable.
 *
 * @param user the authenticated user; null when refused
 * @param refusal null when the login succeeded
 */
public record LoginResult(String user, Refusal refusal) {
    /** Why a login was refused; each protocol says it its own way. */
    public enum Refusal {
        /** Wrong password, unknown user, a user not allowed from there (guest from afar): no details given. */
        CREDENTIALS,
        /** Too many failed logins from this address lately: refused before any checking. */
        RATE_LIMITED,
        /** Every authentication thread is busy and the queue full: try again later. */
        BUSY
    }

    static LoginResult ok(String user) {
        return new LoginResult(user, null);
    }

    static LoginResult refused(Refusal refusal) {
        return new LoginResult(null, refusal);
    }

    public boolean succeeded() {
        return refusal == null;
    }
}
