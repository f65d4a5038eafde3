package io.skiffmq.server;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The data directory made ready before the broker uses it: created when missing, and everything in it (the
 * journal's folders and files too) readable and writable by the user the broker runs as. When it is not, the start
 * stops with one line that names the path, that user's uid, the path's owner, and the fix, rather than with the
 * stack trace of the first file that fails: a container's data volume bind-mounted from a host folder that uid
 * 10001 cannot write is the usual case. Stateless.
 */
final class DataDirectory {
    private DataDirectory() {
    }

    /**
     * Creates {@code dir} when missing and checks it.
     *
     * @throws IllegalStateException saying what is wrong and how to fix it
     */
    static void prepare(Path dir) throws IOException {
        Path absolute = dir.toAbsolutePath();
        try {
            Files.createDirectories(absolute);
        } catch (FileAlreadyExistsException e) {
            throw new IllegalStateException("the data directory " + absolute + " is a file, not a directory");
        } catch (FileSystemException e) {
            throw refused(absolute, nearestExisting(absolute), true);
        }
        Optional<Path> refused;
        try (Stream<Path> walk = Files.walk(absolute)) {
            refused = walk.filter(p -> !Files.isReadable(p) || !Files.isWritable(p)).findFirst();
        } catch (java.io.UncheckedIOException e) {
            // a folder inside that cannot even be listed
            refused = Optional.of(e.getCause() instanceof FileSystemException f && f.getFile() != null
                ? Path.of(f.getFile()) : absolute);
        }
        if (refused.isPresent()) {
            throw refused(absolute, refused.get(), false);
        }
    }

    /** @param creating {@code dir} could not be created in {@code path}; else {@code path} is not writable */
    private static IllegalStateException refused(Path dir, Path path, boolean creating) {
        String which = creating ? "cannot create the data directory " + dir + " in " + path
            : "cannot write " + (path.equals(dir) ? "the data directory " + dir : path + " in the data directory " + dir);
        String owner = attribute(path, "unix:uid").map(owned -> " (it belongs to uid " + owned
            + attribute(path, "posix:permissions").map(p -> ", " + PosixFilePermissions.toString(permissions(p)))
                .orElse("") + ")").orElse("");
        String uid = attribute(Path.of("/proc/self"), "unix:uid").map(String::valueOf)
            .orElse(System.getProperty("user.name"));
        return new IllegalStateException("uid " + uid + ", the user the broker runs as, " + which + owner
            + ": give it that user (chown -R " + uid + " on it; for a container's volume, on the host's folder), or"
            + " set data-dir to a folder it can write");
    }

    @SuppressWarnings("unchecked")
    private static java.util.Set<java.nio.file.attribute.PosixFilePermission> permissions(Object attribute) {
        return (java.util.Set<java.nio.file.attribute.PosixFilePermission>) attribute;
    }

    private static Optional<Object> attribute(Path path, String name) {
        try {
            return Optional.ofNullable(Files.getAttribute(path, name));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static Path nearestExisting(Path path) {
        Path existing = path;
        while (existing.getParent() != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        return existing;
    }
}
