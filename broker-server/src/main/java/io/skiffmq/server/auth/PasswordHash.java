package io.skiffmq.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * A stored password hash in one of the formats we verify, as written in a users file ({@link #toString()}):
 * <ul>
 * <li>RabbitMQ's ({@code rabbit_password_hashing_sha256}, the default we write; {@code _sha512}; {@code _md5}
 *     for old imports): {@code base64(salt ++ H(salt ++ utf8(password)))} with a 4-byte random salt, written as
 *     {@code rabbit_password_hashing_sha256$BASE64}, so a definitions export's {@code hashing_algorithm} and
 *     {@code password_hash} go in unchanged;</li>
 * <li>SkiffMQ's earlier {@code pbkdf2-sha256$iterations$salt$key}: still verified, never written.</li>
 * </ul>
 * Verification compares in constant time. Immutable.
 */
public record PasswordHash(Algorithm algorithm, String value) {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int SALT_BYTES = 4;

    /** The hashing algorithms, by RabbitMQ's module names (and ours for PBKDF2). */
    public enum Algorithm {
        SHA256("rabbit_password_hashing_sha256", "SHA-256"),
        SHA512("rabbit_password_hashing_sha512", "SHA-512"),
        MD5("rabbit_password_hashing_md5", "MD5"),
        PBKDF2_SHA256("pbkdf2-sha256", null);

        private final String moduleName;
        private final String digest;

        Algorithm(String moduleName, String digest) {
            this.moduleName = moduleName;
            this.digest = digest;
        }

        /** RabbitMQ's name, as in a definitions file's {@code hashing_algorithm}. */
        public String moduleName() {
            return moduleName;
        }

        /** The algorithm with RabbitMQ's (or our) name, or null. */
        public static Algorithm named(String name) {
            for (Algorithm a : values()) {
                if (a.moduleName.equals(name)) {
                    return a;
                }
            }
            return null;
        }
    }

    public PasswordHash {
        if (algorithm == null || value == null) {
            throw new IllegalArgumentException("a password hash needs an algorithm and a value");
        }
    }

    /** {@code password} hashed with {@code algorithm} and a fresh salt (not PBKDF2, which we no longer write). */
    public static PasswordHash of(Algorithm algorithm, String password) {
        if (algorithm == Algorithm.PBKDF2_SHA256) {
            throw new IllegalArgumentException("pbkdf2-sha256 is verified only, no longer written");
        }
        byte[] salt = new byte[SALT_BYTES];
        RANDOM.nextBytes(salt);
        byte[] digest = salted(algorithm, salt, password);
        byte[] stored = new byte[SALT_BYTES + digest.length];
        System.arraycopy(salt, 0, stored, 0, SALT_BYTES);
        System.arraycopy(digest, 0, stored, SALT_BYTES, digest.length);
        return new PasswordHash(algorithm, Base64.getEncoder().encodeToString(stored));
    }

    /** {@code password} hashed with RabbitMQ's default, salted SHA-256. */
    public static PasswordHash of(String password) {
        return of(Algorithm.SHA256, password);
    }

    /**
     * Reads the users-file form, {@code ALGORITHM$VALUE}.
     *
     * @throws IllegalArgumentException when it is not one
     */
    public static PasswordHash parse(String stored) {
        int dollar = stored.indexOf('$');
        Algorithm algorithm = dollar < 0 ? null : Algorithm.named(stored.substring(0, dollar));
        if (algorithm == null) {
            throw new IllegalArgumentException("expected rabbit_password_hashing_sha256$…, "
                + "rabbit_password_hashing_sha512$…, rabbit_password_hashing_md5$… or pbkdf2-sha256$…");
        }
        return new PasswordHash(algorithm, stored.substring(dollar + 1));
    }

    /** True when {@code password} is the one hashed; false for a malformed value too. */
    public boolean matches(String password) {
        try {
            if (algorithm == Algorithm.PBKDF2_SHA256) {
                return pbkdf2Matches(password);
            }
            byte[] stored = Base64.getDecoder().decode(value);
            if (stored.length <= SALT_BYTES) {
                return false;
            }
            byte[] salt = java.util.Arrays.copyOf(stored, SALT_BYTES);
            byte[] expected = java.util.Arrays.copyOfRange(stored, SALT_BYTES, stored.length);
            return MessageDigest.isEqual(expected, salted(algorithm, salt, password));
        } catch (IllegalArgumentException e) {
            return false; // not base64
        }
    }

    private static byte[] salted(Algorithm algorithm, byte[] salt, String password) {
        try {
            MessageDigest digest = MessageDigest.getInstance(algorithm.digest);
            digest.update(salt);
            digest.update(password.getBytes(StandardCharsets.UTF_8));
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm.digest + " is part of every JDK", e);
        }
    }

    /** {@code iterations$salt$key}, base64 without padding. */
    private boolean pbkdf2Matches(String password) {
        String[] parts = value.split("\\$");
        if (parts.length != 3) {
            return false;
        }
        Base64.Decoder b64 = Base64.getDecoder();
        byte[] expected = b64.decode(parts[2]);
        try {
            PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), b64.decode(parts[1]), Integer.parseInt(parts[0]),
                expected.length * 8);
            byte[] key = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
            return MessageDigest.isEqual(expected, key);
        } catch (NumberFormatException | GeneralSecurityException e) {
            return false; // a malformed count, or a password the key factory refuses (empty)
        }
    }

    /** The users-file form, {@code ALGORITHM$VALUE}. */
    @Override
    public String toString() {
        return algorithm.moduleName + "$" + value;
    }
}
