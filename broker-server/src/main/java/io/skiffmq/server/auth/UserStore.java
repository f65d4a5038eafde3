package io.skiffmq.server.auth;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Users and their passwords, stored as salted PBKDF2-HMAC-SHA256 hashes, never in clear. {@code guest} (password
 * {@code guest}) exists by default and, as in RabbitMQ, is accepted from loopback addresses only.
 *
 * <p>A users file has one {@code name:hash} line per user, where the hash is what {@link #hash} prints
 * ({@code pbkdf2-sha256$iterations$salt$key}, base64); make one with
 * {@code java -cp skiffmq.jar io.skiffmq.server.UserStore PASSWORD}. Thread-safe.
 */
public final class UserStore {
    private static final String SCHEME = "pbkdf2-sha256";
    private static final int ITERATIONS = 100_000;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<String, String> hashes = new ConcurrentHashMap<>();
    private final Set<String> loopbackOnly = ConcurrentHashMap.newKeySet();

    /** A store with {@code guest}/{@code guest}, loopback only. */
    public static UserStore withGuest() {
        UserStore store = new UserStore();
        store.add("guest", hash("guest"));
        store.loopbackOnly.add("guest");
        return store;
    }

    /** Adds the users of a users file (see the class comment). */
    public void load(Path file) throws IOException {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            int colon = trimmed.indexOf(':');
            if (colon <= 0 || !trimmed.startsWith(SCHEME + "$", colon + 1)) {
                throw new IOException(file + ": expected name:" + SCHEME + "$…, got a line starting "
                    + trimmed.substring(0, Math.min(8, trimmed.length())));
            }
            add(trimmed.substring(0, colon), trimmed.substring(colon + 1));
            loopbackOnly.remove(trimmed.substring(0, colon));
        }
    }

    /** Adds or replaces a user with its stored hash (the durable definitions hold the users; see {@code Admin}). */
    public void add(String user, String hash) {
        hashes.put(user, hash);
    }

    /** Forgets a user: it can no longer log in. */
    public void remove(String user) {
        hashes.remove(user);
    }

    /** The users and their stored hashes, a copy: what a first start seeds the durable definitions with. */
    public Map<String, String> storedHashes() {
        return Map.copyOf(hashes);
    }

    /**
     * True when {@code password} is {@code user}'s and the user may connect from {@code remote}. The answer does
     * not say which part was wrong, and takes the same work for an unknown user.
     */
    public boolean authenticate(String user, String password, InetAddress remote) {
        String stored = hashes.get(user);
        boolean matches = verify(password, stored == null ? DUMMY : stored) && stored != null;
        return matches && (!loopbackOnly.contains(user) || remote.isLoopbackAddress());
    }

    /** True when {@code user} exists and may connect from {@code remote} (SASL ANONYMOUS logs in as it). */
    public boolean permits(String user, InetAddress remote) {
        return hashes.containsKey(user) && (!loopbackOnly.contains(user) || remote.isLoopbackAddress());
    }

    private static final String DUMMY = hash("not a password anyone has");

    /** The stored form of {@code password}, with a fresh random salt. */
    public static String hash(String password) {
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        Base64.Encoder b64 = Base64.getEncoder().withoutPadding();
        return SCHEME + "$" + ITERATIONS + "$" + b64.encodeToString(salt) + "$"
            + b64.encodeToString(derive(password, salt, ITERATIONS));
    }

    private static boolean verify(String password, String stored) {
        String[] parts = stored.split("\\$");
        if (parts.length != 4 || !parts[0].equals(SCHEME)) {
            return false;
        }
        Base64.Decoder b64 = Base64.getDecoder();
        byte[] expected = b64.decode(parts[3]);
        return MessageDigest.isEqual(expected, derive(password, b64.decode(parts[2]), Integer.parseInt(parts[1])));
    }

    private static byte[] derive(String password, byte[] salt, int iterations) {
        try {
            PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, 256);
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("PBKDF2WithHmacSHA256 is part of every JDK", e);
        }
    }

    /** Prints the stored form of the password given as the only argument, for a users file. */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: UserStore PASSWORD   (prints a hash for a users file line name:HASH)");
            System.exit(2);
        }
        System.out.println(hash(args[0]));
    }
}
