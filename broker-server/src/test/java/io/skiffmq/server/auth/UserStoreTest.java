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

    @Test
    void guestOnlyFromLoopback() throws Exception {
        UserStore users = UserStore.withGuest();
        assertThat(users.authenticate("guest", "guest", InetAddress.getLoopbackAddress())).isTrue();
        assertThat(users.authenticate("guest", "guest", InetAddress.getByName("192.0.2.10"))).isFalse();
        assertThat(users.authenticate("guest", "nope", InetAddress.getLoopbackAddress())).isFalse();
    }

    @Test
    void usersFileHoldsSaltedHashesNeverPasswords() throws Exception {
        String hash = UserStore.hash("s3cret");
        assertThat(hash).startsWith("pbkdf2-sha256$").doesNotContain("s3cret");
        assertThat(UserStore.hash("s3cret")).as("a fresh salt each time").isNotEqualTo(hash);
        Path file = dir.resolve("users");
        Files.writeString(file, "# users\nalice:" + hash + "\n");
        UserStore users = UserStore.withGuest();
        users.load(file);
        assertThat(users.authenticate("alice", "s3cret", InetAddress.getByName("192.0.2.10"))).isTrue();
        assertThat(users.authenticate("alice", "S3cret", InetAddress.getByName("192.0.2.10"))).isFalse();
    }

    @Test
    void aMalformedUsersFileIsRefused() throws Exception {
        Path file = dir.resolve("bad");
        Files.writeString(file, "bob:plaintext-password\n");
        assertThatThrownBy(() -> UserStore.withGuest().load(file)).hasMessageContaining("expected name:pbkdf2-sha256");
    }
}
