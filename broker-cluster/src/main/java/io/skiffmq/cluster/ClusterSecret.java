package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret every node of a cluster shares (RabbitMQ's Erlang cookie): one line of text in a file that only its
 * owner may read. {@link #loadOrCreate} makes one on a node's first start, as the Erlang VM makes
 * {@code .erlang.cookie}, and refuses a file that others can read, as the Erlang VM does. The secret itself never
 * leaves the node: peers prove they hold it by {@link #mac} (see {@link SecretTls}). Immutable.
 */
public final class ClusterSecret {
    /** 32 random bytes, as 64 hex digits: more than the 20 upper-case letters of a generated Erlang cookie. */
    private static final int GENERATED_BYTES = 32;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final byte[] key;

    private ClusterSecret(byte[] key) {
        this.key = key;
    }

    /** A secret from its text (tests, and what {@link #loadOrCreate} read). */
    public static ClusterSecret of(String text) {
        String trimmed = text.strip();
        if (trimmed.isEmpty()) {
            throw new IllegalArgumentException("the cluster secret is empty");
        }
        return new ClusterSecret(trimmed.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Reads the secret from {@code file}, first writing a new random one there (owner read and write only) when
     * the file does not exist.
     *
     * @throws IOException when it cannot be read or written, or when group or others have any access to it
     */
    public static ClusterSecret loadOrCreate(Path file) throws IOException {
        if (!Files.exists(file)) {
            byte[] random = new byte[GENERATED_BYTES];
            new SecureRandom().nextBytes(random);
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            // written beside it with its permissions (never readable by others, not even for a moment), then linked
            // into place whole: a node starting at the same time sees no file or the whole secret, and one of two
            // that raced keeps the other's
            Path partial = Files.createTempFile(parent, ".cluster-secret", ".partial",
                PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            try {
                Files.writeString(partial, HexFormat.of().formatHex(random) + "\n");
                Files.createLink(file.toAbsolutePath(), partial);
            } catch (FileAlreadyExistsException raced) {
                // another process made it first: read theirs
            } finally {
                Files.deleteIfExists(partial);
            }
        }
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
        if (!OWNER_ONLY.containsAll(permissions)) {
            throw new IOException("cluster secret file " + file + " must be accessible by its owner only (chmod 600),"
                + " is " + PosixFilePermissions.toString(permissions));
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        if (text.isBlank()) {
            throw new IOException("cluster secret file " + file + " is empty");
        }
        return of(text);
    }

    /** HMAC-SHA256 of {@code data} under the secret. */
    public byte[] mac(byte[] data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    @Override
    public String toString() {
        return "ClusterSecret[hidden]";
    }
}
