package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory the broker cannot use stops the start with one line naming it, the broker's uid and the fix, and
 * no stack trace: the broker's own main in a child JVM, on a folder it may not write. Root writes anywhere, so as
 * root (CI) the child runs as root without the capabilities that let it ignore permission bits (setpriv), on a
 * folder another uid owns; as anyone else, on a folder without write permission.
 */
class DataDirectoryTest {
    @TempDir
    Path dir;

    @Test
    void aFolderTheBrokerCannotWriteStopsTheStartWithOneLine() throws Exception {
        Path data = Files.createDirectory(dir.resolve("data"));
        List<String> command = new ArrayList<>();
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        String owner;
        if (uid == 0) {
            assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")),
                "running as root, and without setpriv the broker could not be made to obey permission bits");
            Files.setAttribute(data, "unix:uid", 65534);
            command.addAll(List.of("/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"));
            owner = "(it belongs to uid 65534, rwxr-xr-x)";
        } else {
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("r-xr-xr-x"));
            owner = "(it belongs to uid " + uid + ", r-xr-xr-x)";
        }
        command.addAll(ChildBroker.javaCommand());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SkiffMq.class.getName(), "--port=0",
            "--management-port=0", "--prometheus-port=0", "--stream-port=0", "--bind=127.0.0.1",
            "--data-dir=" + data));
        Process broker = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(broker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(broker.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(broker.exitValue()).as(output).isEqualTo(1);
        assertThat(output.lines().filter(l -> l.startsWith("skiffmq: "))).as(output).containsExactly("skiffmq: uid "
            + uid + ", the user the broker runs as, cannot write the data directory " + data + " " + owner
            + ": give it that user (chown -R " + uid + " on it; for a container's volume, on the host's folder), or"
            + " set data-dir to a folder it can write");
        assertThat(output).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void aFileWhereTheFolderShouldBeIsSaidAsSuch() throws Exception {
        Path file = Files.writeString(dir.resolve("data"), "not a folder");
        assertThatThrownBy(() -> DataDirectory.prepare(file)).isInstanceOf(IllegalStateException.class)
            .hasMessage("the data directory " + file + " is a file, not a directory");
    }

    @Test
    void aMissingFolderIsCreatedAndAWritableOneLeftAlone() throws Exception {
        Path nested = dir.resolve("a/b/data");
        DataDirectory.prepare(nested);
        assertThat(nested).isDirectory();
        Files.writeString(nested.resolve("definitions.amqp"), "x");
        DataDirectory.prepare(nested);
        assertThat(nested.resolve("definitions.amqp")).hasContent("x");
    }
}
