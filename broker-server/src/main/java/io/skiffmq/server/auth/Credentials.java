package io.skiffmq.server.auth;

/**
 * What a client's SASL response claims, read on the connection's loop (cheap); checking it is
 * {@link SaslAuthenticator#login}'s business, off the loop. Immutable.
 *
 * @param mechanism as the client named it ({@code PLAIN}, {@code AMQPLAIN}, {@code ANONYMOUS}, {@code EXTERNAL})
 * @param user the user claimed; null when the response was malformed (the login then fails)
 * @param password the password; null for mechanisms without one
 */
public record Credentials(String mechanism, String user, String password) {
    /** A response that could not be read: it fails, logged with the mechanism only. */
    static Credentials malformed(String mechanism) {
        return new Credentials(mechanism, null, null);
    }

    @Override
    public String toString() {
        return mechanism + " user '" + user + "'"; // never the password
    }
}
