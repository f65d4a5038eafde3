package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.junit.jupiter.api.Test;

class SaslAuthenticatorTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private static SaslInit anonymous() {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("ANONYMOUS"));
        init.setInitialResponse(new Binary(new byte[0]));
        return init;
    }

    @Test
    void anonymousLogsInAsItsUserWithThatUsersRestrictions() throws Exception {
        SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), "guest");
        assertThat(sasl.mechanisms()).contains(Symbol.valueOf("ANONYMOUS"), Symbol.valueOf("PLAIN"));
        assertThat(sasl.authenticate(anonymous(), LOOPBACK)).isEqualTo("guest");
        assertThat(sasl.authenticate(anonymous(), InetAddress.getByName("192.0.2.10"))).as("guest: loopback only")
            .isNull();
    }

    @Test
    void anonymousAsAnOrdinaryUserIsAcceptedFromAnywhere() throws Exception {
        UserStore users = UserStore.withGuest();
        users.add("visitor", UserStore.hash("x"));
        SaslAuthenticator sasl = new SaslAuthenticator(users, "visitor");
        assertThat(sasl.authenticate(anonymous(), InetAddress.getByName("192.0.2.10"))).isEqualTo("visitor");
    }

    @Test
    void anonymousAsAMissingUserIsRefused() {
        SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), "nobody");
        assertThat(sasl.authenticate(anonymous(), LOOPBACK)).isNull();
    }

    @Test
    void withoutAnAnonymousUserAnonymousIsNeitherOfferedNorAccepted() {
        SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), null);
        assertThat(sasl.mechanisms()).containsExactly(Symbol.valueOf("PLAIN"));
        assertThat(sasl.authenticate(anonymous(), LOOPBACK)).isNull();
    }
}
