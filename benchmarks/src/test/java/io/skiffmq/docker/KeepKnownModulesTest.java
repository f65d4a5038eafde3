package io.skiffmq.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code docker/keep-known-modules}, which the image's build runs on its jvm.options: a flag naming a module the
 * Java on the PATH lacks is left out (a JRE's missing jdk.compiler, which would make java warn at every start), and
 * said; every other flag is kept, in order. Run with this JVM's java, which has every module the root pom's flags
 * name, so the module left out is one no Java has.
 */
class KeepKnownModulesTest {
    @TempDir
    Path dir;

    @Test
    void flagsNamingAModuleTheRuntimeLacksAreLeftOut() throws Exception {
        String kept = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED "
            + "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED -Dchronicle.analytics.disable=true";
        String missing = "--add-exports=jdk.nowhere/jdk.nowhere.internal=ALL-UNNAMED";
        Path options = Files.writeString(dir.resolve("jvm.options"), missing + " " + kept + "\n");
        Path script = Path.of("").toAbsolutePath().getParent().resolve("docker/keep-known-modules");

        ProcessBuilder builder = new ProcessBuilder("sh", script.toString(), options.toString());
        builder.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":"
            + System.getenv("PATH"));
        Process process = builder.redirectErrorStream(true).start();
        String said = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(process.exitValue()).as(said).isZero();
        assertThat(Files.readString(options)).isEqualTo(kept + "\n");
        assertThat(said.strip()).isEqualTo("keep-known-modules: " + missing
            + " left out: this Java runtime has no module jdk.nowhere");
    }
}
