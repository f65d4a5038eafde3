package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * Hashes made here by RabbitMQ's documented algorithm (rabbitmq.com/docs/passwords#computing-password-hash), not
 * by {@link PasswordHash}: a 4-byte salt, H(salt ++ utf8(password)), base64(salt ++ hash).
 */
class PasswordHashTest {
    private static String rabbitHash(String digest, byte[] salt, String password) throws Exception {
        MessageDigest md = MessageDigest.getInstance(digest);
        byte[] salted = new byte[salt.length + password.getBytes(StandardCharsets.UTF_8).length];
        System.arraycopy(salt, 0, salted, 0, salt.length);
        byte[] utf8 = password.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(utf8, 0, salted, salt.length, utf8.length);
        byte[] hash = md.digest(salted);
        byte[] stored = new byte[salt.length + hash.length];
        System.arraycopy(salt, 0, stored, 0, salt.length);
        System.arraycopy(hash, 0, stored, salt.length, hash.length);
        return Base64.getEncoder().encodeToString(stored);
    }

    private static byte[] randomSalt() {
        byte[] salt = new byte[4];
        new SecureRandom().nextBytes(salt);
        return salt;
    }

    @Test
    void theWorkedExampleOfRabbitMqsDocsIsVerified() throws Exception {
        // the docs' example: salt 908D C60A, password test12
        String hash = rabbitHash("SHA-256", HexFormat.of().parseHex("908DC60A"), "test12");
        assertThat(hash).isEqualTo("kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR");
        PasswordHash stored = new PasswordHash(PasswordHash.Algorithm.SHA256, hash);
        assertThat(stored.matches("test12")).isTrue();
        assertThat(stored.matches("test13")).isFalse();
    }

    @Test
    void sha256HashesInRabbitMqsFormatAreVerified() throws Exception {
        String hash = rabbitHash("SHA-256", randomSalt(), "s3cret ünïcode");
        PasswordHash stored = PasswordHash.parse("rabbit_password_hashing_sha256$" + hash);
        assertThat(stored.algorithm()).isEqualTo(PasswordHash.Algorithm.SHA256);
        assertThat(stored.matches("s3cret ünïcode")).isTrue();
        assertThat(stored.matches("s3cret unicode")).isFalse();
    }

    @Test
    void sha512HashesInRabbitMqsFormatAreVerified() throws Exception {
        String hash = rabbitHash("SHA-512", randomSalt(), "guest2");
        PasswordHash stored = PasswordHash.parse("rabbit_password_hashing_sha512$" + hash);
        assertThat(stored.matches("guest2")).isTrue();
        assertThat(stored.matches("guest")).isFalse();
        assertThat(new PasswordHash(PasswordHash.Algorithm.SHA256, hash).matches("guest2")).as("wrong algorithm")
            .isFalse();
    }

    @Test
    void md5HashesOfOldImportsAreVerified() throws Exception {
        String hash = rabbitHash("MD5", HexFormat.of().parseHex("CAD5089B"), "simon");
        assertThat(new PasswordHash(PasswordHash.Algorithm.MD5, hash).matches("simon")).isTrue();
        assertThat(new PasswordHash(PasswordHash.Algorithm.MD5, hash).matches("simon2")).isFalse();
    }

    @Test
    void whatWeWriteIsRabbitMqsDefaultFormatWithAFreshSalt() throws Exception {
        PasswordHash ours = PasswordHash.of("pw");
        assertThat(ours.algorithm()).isEqualTo(PasswordHash.Algorithm.SHA256);
        assertThat(ours.toString()).startsWith("rabbit_password_hashing_sha256$");
        byte[] stored = Base64.getDecoder().decode(ours.value());
        assertThat(stored).hasSize(4 + 32);
        // RabbitMQ's algorithm with our salt gives our value
        assertThat(rabbitHash("SHA-256", java.util.Arrays.copyOf(stored, 4), "pw")).isEqualTo(ours.value());
        assertThat(PasswordHash.of("pw").value()).isNotEqualTo(ours.value());
        assertThat(PasswordHash.of(PasswordHash.Algorithm.SHA512, "pw").matches("pw")).isTrue();
    }

    @Test
    void malformedValuesNeverMatch() {
        assertThat(new PasswordHash(PasswordHash.Algorithm.SHA256, "not base64!").matches("x")).isFalse();
        assertThat(new PasswordHash(PasswordHash.Algorithm.SHA256, "AAAA").matches("")).isFalse();
        assertThat(new PasswordHash(PasswordHash.Algorithm.PBKDF2_SHA256, "x$y").matches("x")).isFalse();
    }
}
