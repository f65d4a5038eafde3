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
        if (ANONYMOUS.equals(init.getMechanism())) {
            return anonymousUser != null && users.permits(anonymousUser, remote) ? anonymousUser : null;
        }
        if (!PLAIN.equals(init.getMechanism()) || init.getInitialResponse() == null) {
            return null;
        }
        // authzid NUL authcid NUL passwd
        Binary response = init.getInitialResponse();
        String text = new String(response.getArray(), response.getArrayOffset(), response.getLength(),
            StandardCharsets.UTF_8);
        int first = text.indexOf('\0');
        int second = first < 0 ? -1 : text.indexOf('\0', first + 1);
        if (second < 0) {
            return null;
        }
        String user = text.substring(first + 1, second);
        String password = text.substring(second + 1);
        return users.authenticate(user, password, remote) ? user : null;
    }
}
