package io.skiffmq.server.auth;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Users and their passwords, stored as salted hashes ({@link PasswordHash}: RabbitMQ's formats, salted SHA-256 by
 * default), never in clear. {@code guest} (password {@code guest}) exists by default and, as in RabbitMQ, is
 * accepted from loopback addresses only; the {@code default-user} setting names another in its place.
 *
 * <p>A users file has one {@code name:hash} line per user, where the hash is a {@link PasswordHash} in its
 * users-file form ({@code rabbit_password_hashing_sha256$BASE64}; SHA-512, MD5 and our earlier
 * {@code pbkdf2-sha256$…} are verified too); make one with
 * {@code java -cp skiffmq.jar io.skiffmq.server.auth.UserStore PASSWORD}. Thread-safe.
 */
public final class UserStore {
    private final Map<String, PasswordHash> hashes = new ConcurrentHashMap<>();
    private final Set<String> loopbackOnly = ConcurrentHashMap.newKeySet();

    /** A store with {@code guest}/{@code guest}, loopback only. */
    public static UserStore withGuest() {
        UserStore store = withUser(AuthSettings.DefaultUser.GUEST);
        store.loopbackOnly.add("guest");
        return store;
    }

    /** A store with {@code user} (the {@code default-user} setting), and no loopback restriction yet. */
    public static UserStore withUser(AuthSettings.DefaultUser user) {
        UserStore store = new UserStore();
        store.add(user.name(), PasswordHash.of(user.password()));
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
            PasswordHash hash;
            try {
                hash = colon <= 0 ? null : PasswordHash.parse(trimmed.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                hash = null;
            }
            if (hash == null) {
                throw new IOException(file + ": expected name:rabbit_password_hashing_sha256$… (or _sha512, _md5, "
                    + "pbkdf2-sha256), got a line starting " + trimmed.substring(0, Math.min(8, trimmed.length())));
            }
            hashes.put(trimmed.substring(0, colon), hash);
            loopbackOnly.remove(trimmed.substring(0, colon));
        }
    }

    /**
     * From now on exactly {@code users} may log in from loopback addresses only (RabbitMQ's {@code loopback_users},
     * the {@code loopback-users} setting), whoever defined them.
     */
    public void restrictToLoopback(java.util.Collection<String> users) {
        loopbackOnly.retainAll(users);
        loopbackOnly.addAll(users);
    }

    /** Adds or replaces a user with its stored hash (the durable definitions hold the users; see {@code Admin}). */
    public void add(String user, PasswordHash hash) {
        hashes.put(user, hash);
    }

    /** Forgets a user: it can no longer log in. */
    public void remove(String user) {
        hashes.remove(user);
    }

    /** The users and their stored hashes, a copy: what a first start seeds the durable definitions with. */
    public Map<String, PasswordHash> storedHashes() {
        return Map.copyOf(hashes);
    }

    /**
     * True when {@code password} is {@code user}'s, wherever the user connects from ({@link #mayConnectFrom} says
     * that). Takes the same work for an unknown user.
     */
    public boolean passwordMatches(String user, String password) {
        PasswordHash stored = hashes.get(user);
        return (stored == null ? DUMMY : stored).matches(password) && stored != null;
    }

    /** True when {@code user} exists (SASL ANONYMOUS and EXTERNAL log in as a user without a password). */
    public boolean exists(String user) {
        return hashes.containsKey(user);
    }

    /** False when {@code user} is one of the loopback-only users and {@code remote} is not a loopback address. */
    public boolean mayConnectFrom(String user, InetAddress remote) {
        return !loopbackOnly.contains(user) || remote.isLoopbackAddress();
    }

    private static final PasswordHash DUMMY = PasswordHash.of("not a password anyone has");

    /** The users-file form of {@code password} hashed as RabbitMQ does by default (salted SHA-256). */
    public static String hash(String password) {
        return PasswordHash.of(password).toString();
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
