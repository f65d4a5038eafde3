package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Ratis lives behind this module (docs/architecture.md): no source file of another module of the reactor imports or
 * names a type of {@code org.apache.ratis}, so that the rest of the broker sees our interfaces only. Logger names in
 * strings (the server sets Ratis' log levels) are allowed.
 */
class RatisStaysHereTest {
    /** {@code org.apache.ratis.} not inside a string: after a space, a bracket or an operator, not a quote. */
    private static final java.util.regex.Pattern RATIS_TYPE =
        java.util.regex.Pattern.compile("(^|[^\"\\w.])org\\.apache\\.ratis\\.", java.util.regex.Pattern.MULTILINE);

    @Test
    void noOtherModuleNamesRatis() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        assertThat(root.resolve("pom.xml")).as("run from the module's directory, under the reactor").exists();
        List<Path> modules;
        try (Stream<Path> children = Files.list(root)) {
            modules = children.filter(p -> Files.isDirectory(p.resolve("src")))
                .filter(p -> !p.getFileName().toString().equals("broker-cluster")).toList();
        }
        assertThat(modules).extracting(p -> p.getFileName().toString()).contains("broker-server", "broker-core");
        List<Path> offenders;
        try (Stream<Path> files = modules.stream().flatMap(RatisStaysHereTest::javaFiles)) {
            offenders = files.filter(RatisStaysHereTest::namesRatis).toList();
        }
        assertThat(offenders).as("files outside broker-cluster that name org.apache.ratis").isEmpty();
    }

    private static Stream<Path> javaFiles(Path module) {
        try {
            return Files.walk(module.resolve("src")).filter(p -> p.toString().endsWith(".java"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean namesRatis(Path file) {
        try {
            return RATIS_TYPE.matcher(Files.readString(file)).find();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
