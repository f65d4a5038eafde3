package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UserStoreTest {
    @TempDir
    Path dir;

    /** What a PLAIN login checks: the password, then where the user connects from. */
    private static boolean authenticate(UserStore users, String user, String password, InetAddress remote) {
        return users.passwordMatches(user, password) && users.mayConnectFrom(user, remote);
    }

    @Test
    void guestOnlyFromLoopback() throws Exception {
        UserStore users = UserStore.withGuest();
        assertThat(authenticate(users, "guest", "guest", InetAddress.getLoopbackAddress())).isTrue();
        assertThat(authenticate(users, "guest", "guest", InetAddress.getByName("192.0.2.10"))).isFalse();
        assertThat(authenticate(users, "guest", "nope", InetAddress.getLoopbackAddress())).isFalse();
        assertThat(users.passwordMatches("guest", "guest")).as("the password is right wherever from").isTrue();
        assertThat(users.mayConnectFrom("guest", InetAddress.getByName("192.0.2.10"))).isFalse();
    }

    @Test
    void usersFileHoldsSaltedHashesNeverPasswords() throws Exception {
        String hash = UserStore.hash("s3cret");
        assertThat(hash).startsWith("rabbit_password_hashing_sha256$").doesNotContain("s3cret");
        assertThat(UserStore.hash("s3cret")).as("a fresh salt each time").isNotEqualTo(hash);
        Path file = dir.resolve("users");
        Files.writeString(file, "# users\nalice:" + hash + "\n");
        UserStore users = UserStore.withGuest();
        users.load(file);
        assertThat(authenticate(users, "alice", "s3cret", InetAddress.getByName("192.0.2.10"))).isTrue();
        assertThat(authenticate(users, "alice", "S3cret", InetAddress.getByName("192.0.2.10"))).isFalse();
    }

    @Test
    void aMalformedUsersFileIsRefused() throws Exception {
        Path file = dir.resolve("bad");
        Files.writeString(file, "bob:plaintext-password\n");
        assertThatThrownBy(() -> UserStore.withGuest().load(file))
            .hasMessageContaining("expected name:rabbit_password_hashing_sha256$");
    }

    @Test
    void earlierPbkdf2EntriesAreStillVerified() throws Exception {
        // what UserStore.hash printed before RabbitMQ's formats: pbkdf2-sha256$iterations$salt$key
        byte[] salt = new byte[16];
        new java.security.SecureRandom().nextBytes(salt);
        javax.crypto.spec.PBEKeySpec spec = new javax.crypto.spec.PBEKeySpec("old".toCharArray(), salt, 1000, 256);
        byte[] key = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec)
            .getEncoded();
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder().withoutPadding();
        Path file = dir.resolve("users");
        Files.writeString(file, "carol:pbkdf2-sha256$1000$" + b64.encodeToString(salt) + "$" + b64.encodeToString(key)
            + "\n");
        UserStore users = UserStore.withGuest();
        users.load(file);
        assertThat(authenticate(users, "carol", "old", InetAddress.getByName("192.0.2.10"))).isTrue();
        assertThat(authenticate(users, "carol", "new", InetAddress.getByName("192.0.2.10"))).isFalse();
    }

    @Test
    void loopbackUsersAreRestrictedWhoeverDefinedThem() throws Exception {
        Path file = dir.resolve("users");
        Files.writeString(file, "guest:" + UserStore.hash("guest2") + "\nalice:" + UserStore.hash("a") + "\n");
        UserStore users = UserStore.withGuest();
        users.load(file);
        InetAddress remote = InetAddress.getByName("192.0.2.10");
        users.restrictToLoopback(java.util.Set.of("guest", "alice"));
        assertThat(authenticate(users, "guest", "guest2", remote)).isFalse();
        assertThat(authenticate(users, "alice", "a", remote)).isFalse();
        assertThat(authenticate(users, "alice", "a", InetAddress.getLoopbackAddress())).isTrue();
        users.restrictToLoopback(java.util.Set.of());
        assertThat(authenticate(users, "guest", "guest2", remote)).as("loopback-users=none").isTrue();
        assertThat(users.exists("alice") && users.mayConnectFrom("alice", remote)).isTrue();
    }
}
