package io.skiffmq.server.auth;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;

/**
 * Server side of SASL [5.3]: {@code PLAIN} (RFC 4616) against the {@link UserStore}, and {@code ANONYMOUS} when
 * enabled. Both complete in one step, so there is no challenge. Stateless; one per listener.
 */
public final class SaslAuthenticator {
    static final Symbol PLAIN = Symbol.valueOf("PLAIN");
    static final Symbol ANONYMOUS = Symbol.valueOf("ANONYMOUS");
    /** The user an anonymous connection runs as. */
    public static final String ANONYMOUS_USER = "anonymous";

    private final UserStore users;
    private final boolean anonymous;

    public SaslAuthenticator(UserStore users, boolean anonymous) {
        this.users = users;
        this.anonymous = anonymous;
    }

    public Symbol[] mechanisms() {
        return anonymous ? new Symbol[] {PLAIN, ANONYMOUS} : new Symbol[] {PLAIN};
    }

    /** The authenticated user, or null when authentication failed (for whatever reason: no details). */
    public String authenticate(SaslInit init, InetAddress remote) {
        if (ANONYMOUS.equals(init.getMechanism())) {
            return anonymous ? ANONYMOUS_USER : null;
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
