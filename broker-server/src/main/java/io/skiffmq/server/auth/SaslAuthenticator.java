package io.skiffmq.server.auth;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;

/**
 * Server side of SASL [5.3]: {@code PLAIN} (RFC 4616) against the {@link UserStore}, and {@code ANONYMOUS}, which
 * logs in as a configured user with that user's restrictions (RabbitMQ 4's {@code anonymous_login_user}: guest by
 * default, so from loopback only). Both complete in one step, so there is no challenge. Stateless; one per
 * listener.
 */
public final class SaslAuthenticator {
    static final Symbol PLAIN = Symbol.valueOf("PLAIN");
    static final Symbol ANONYMOUS = Symbol.valueOf("ANONYMOUS");
    /** The user a connection without SASL ({@code allow-plain-amqp}) runs as. */
    public static final String ANONYMOUS_USER = "anonymous";

    private final UserStore users;
    /** The user ANONYMOUS logs in as; null when ANONYMOUS is not offered. */
    private final String anonymousUser;

    public SaslAuthenticator(UserStore users, String anonymousUser) {
        this.users = users;
        this.anonymousUser = anonymousUser;
    }

    public Symbol[] mechanisms() {
        return anonymousUser != null ? new Symbol[] {PLAIN, ANONYMOUS} : new Symbol[] {PLAIN};
    }

    /** The authenticated user, or null when authentication failed (for whatever reason: no details). */
    public String authenticate(SaslInit init, InetAddress remote) {
        Binary response = init.getInitialResponse();
        return authenticate(init.getMechanism() == null ? null : init.getMechanism().toString(),
            response == null ? null : java.util.Arrays.copyOfRange(response.getArray(), response.getArrayOffset(),
                response.getArrayOffset() + response.getLength()), remote);
    }

    /**
     * Authenticates a one-step mechanism ({@code PLAIN}, {@code ANONYMOUS}) as named by the client, for every
     * protocol: AMQP 1.0's SASL and 0-9-1's {@code start-ok}.
     *
     * @param response the client's response; null when it sent none
     * @return the user, or null when authentication failed
     */
    public String authenticate(String mechanism, byte[] response, InetAddress remote) {
        if (ANONYMOUS.toString().equals(mechanism)) {
            return anonymousUser != null && users.permits(anonymousUser, remote) ? anonymousUser : null;
        }
        if (!PLAIN.toString().equals(mechanism) || response == null) {
            return null;
        }
        // authzid NUL authcid NUL passwd
        String text = new String(response, StandardCharsets.UTF_8);
        int first = text.indexOf('\0');
        int second = first < 0 ? -1 : text.indexOf('\0', first + 1);
        if (second < 0) {
            return null;
        }
        return password(text.substring(first + 1, second), text.substring(second + 1), remote);
    }

    /** Checks a user name and password (0-9-1's {@code AMQPLAIN} carries them in a table); the user or null. */
    public String password(String user, String password, InetAddress remote) {
        return users.authenticate(user, password, remote) ? user : null;
    }

    /** True when ANONYMOUS is offered. */
    public boolean anonymousOffered() {
        return anonymousUser != null;
    }
}
