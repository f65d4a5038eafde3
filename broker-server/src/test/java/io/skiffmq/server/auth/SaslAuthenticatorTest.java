package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.apache.qpid.proton.amqp.Symbol;
import org.junit.jupiter.api.Test;

class SaslAuthenticatorTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private static String login(SaslAuthenticator sasl, String mechanism, byte[] response, InetAddress remote) {
        Credentials credentials = sasl.read(mechanism, response, null);
        return credentials == null ? null : sasl.login(credentials, remote).join().user();
    }

    private static byte[] plain(String user, String password) {
        return ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void anonymousLogsInAsItsUserWithThatUsersRestrictions() throws Exception {
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), "guest")) {
            assertThat(sasl.mechanisms(null)).contains(Symbol.valueOf("ANONYMOUS"), Symbol.valueOf("PLAIN"));
            assertThat(login(sasl, "ANONYMOUS", new byte[0], LOOPBACK)).isEqualTo("guest");
            assertThat(login(sasl, "ANONYMOUS", new byte[0], InetAddress.getByName("192.0.2.10")))
                .as("guest: loopback only").isNull();
        }
    }

    @Test
    void aLoopbackOnlyUserFromAfarIsRefusedAsSuchOnlyWhenItsCredentialsAreRight() throws Exception {
        InetAddress afar = InetAddress.getByName("192.0.2.10");
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), "guest")) {
            for (Credentials credentials : java.util.List.of(sasl.read("PLAIN", plain("guest", "guest"), null),
                    sasl.read("ANONYMOUS", null, null))) {
                LoginResult result = sasl.login(credentials, afar).join();
                assertThat(result.succeeded()).isFalse();
                assertThat(result.user()).isNull();
                assertThat(result.refusal()).isEqualTo(LoginResult.Refusal.LOOPBACK_ONLY);
                assertThat(result.reason()).isEqualTo("user 'guest' can only connect via localhost");
            }
            LoginResult wrong = sasl.login(sasl.read("PLAIN", plain("guest", "wrong"), null), afar).join();
            assertThat(wrong.refusal()).isEqualTo(LoginResult.Refusal.CREDENTIALS);
            assertThat(wrong.reason()).isEqualTo("invalid credentials");
        }
    }

    @Test
    void anonymousAsAnOrdinaryUserIsAcceptedFromAnywhere() throws Exception {
        UserStore users = UserStore.withGuest();
        users.add("visitor", PasswordHash.of("x"));
        try (SaslAuthenticator sasl = new SaslAuthenticator(users, "visitor")) {
            assertThat(login(sasl, "ANONYMOUS", null, InetAddress.getByName("192.0.2.10"))).isEqualTo("visitor");
        }
    }

    @Test
    void anonymousAsAMissingUserIsRefused() {
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), "nobody")) {
            assertThat(login(sasl, "ANONYMOUS", null, LOOPBACK)).isNull();
        }
    }

    @Test
    void withoutAnAnonymousUserAnonymousIsNeitherOfferedNorAccepted() {
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), null)) {
            assertThat(sasl.mechanisms(null)).containsExactly(Symbol.valueOf("PLAIN"));
            assertThat(sasl.read("ANONYMOUS", null, null)).isNull();
        }
    }

    @Test
    void plainChecksThePasswordOnAnAuthenticationThread() {
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), null)) {
            Credentials credentials = sasl.read("PLAIN", plain("guest", "guest"), null);
            assertThat(credentials.toString()).doesNotContain("guest\0").isEqualTo("PLAIN user 'guest'");
            LoginResult result = sasl.login(credentials, LOOPBACK).join();
            assertThat(result.succeeded()).isTrue();
            assertThat(result.user()).isEqualTo("guest");
            assertThat(login(sasl, "PLAIN", plain("guest", "wrong"), LOOPBACK)).isNull();
            assertThat(login(sasl, "PLAIN", "no separators".getBytes(StandardCharsets.UTF_8), LOOPBACK)).isNull();
            assertThat(sasl.read("CRAM-MD5", new byte[0], null)).as("not offered").isNull();
            assertThat(sasl.read("EXTERNAL", new byte[0], null)).as("no certificate").isNull();
        }
    }

    @Test
    void theCheckRunsOnANamedAuthenticationThreadNotTheCaller(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // a slow hash (our earlier PBKDF2, 1,000,000 iterations): the caller is back long before the check is done
        byte[] salt = new byte[16];
        javax.crypto.spec.PBEKeySpec spec = new javax.crypto.spec.PBEKeySpec("pw".toCharArray(), salt, 1_000_000, 256);
        byte[] key = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec)
            .getEncoded();
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder().withoutPadding();
        java.nio.file.Path file = dir.resolve("users");
        java.nio.file.Files.writeString(file, "slow:pbkdf2-sha256$1000000$" + b64.encodeToString(salt) + "$"
            + b64.encodeToString(key) + "\n");
        UserStore users = UserStore.withGuest();
        users.load(file);
        try (SaslAuthenticator sasl = new SaslAuthenticator(users, null)) {
            java.util.concurrent.CompletableFuture<LoginResult> login = sasl.login(
                sasl.read("PLAIN", plain("slow", "pw"), null), LOOPBACK);
            assertThat(login).as("returned before the check is done").isNotDone();
            String[] thread = new String[1];
            LoginResult result = login.whenComplete((r, e) -> thread[0] = Thread.currentThread().getName()).join();
            assertThat(result.user()).isEqualTo("slow");
            assertThat(thread[0]).startsWith("skiffmq-auth-");
        }
    }

    @Test
    void overTheFailedLoginLimitLoginsAreRefusedWithoutChecking() throws Exception {
        AuthSettings settings = AuthSettings.defaults().with("login-failure-burst", "3")
            .with("login-failure-rate", "0.001");
        InetAddress attacker = InetAddress.getByName("192.0.2.66");
        try (SaslAuthenticator sasl = new SaslAuthenticator(UserStore.withGuest(), null, settings)) {
            for (int i = 0; i < 3; i++) {
                assertThat(sasl.login(sasl.read("PLAIN", plain("guest", "bad" + i), null), attacker).join().refusal())
                    .isEqualTo(LoginResult.Refusal.CREDENTIALS);
            }
            assertThat(sasl.checks()).isEqualTo(3);
            LoginResult limited = sasl.login(sasl.read("PLAIN", plain("guest", "guest"), null), attacker).join();
            assertThat(limited.refusal()).isEqualTo(LoginResult.Refusal.RATE_LIMITED);
            assertThat(sasl.checks()).as("no hashing over the limit").isEqualTo(3);
            assertThat(login(sasl, "PLAIN", plain("guest", "guest"), LOOPBACK)).as("other addresses go on")
                .isEqualTo("guest");
        }
    }
}
