package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A port the broker cannot bind stops the start with one line naming the address and the setting, exit status 1 and
 * no stack trace: the broker's own main in a child JVM, with one of its ports held by this test.
 */
class PortInUseTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"port", "management-port", "prometheus-port", "stream-port", "cluster-port"})
    void aPortInUseStopsTheStartWithOneLine(String setting) throws Exception {
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            List<String> command = new ArrayList<>(ChildBroker.javaCommand());
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), SkiffMq.class.getName(),
                "--bind=127.0.0.1", "--data-dir=" + dir.resolve("data")));
            for (String port : List.of("port", "management-port", "prometheus-port", "stream-port")) {
                command.add("--" + port + "=" + (port.equals(setting) ? held.getLocalPort() : 0));
            }
            if (setting.equals("cluster-port")) { // Ratis' server binds it, and would end the JVM its own way
                command.add("--cluster-port=" + held.getLocalPort());
            }
            Process broker = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(broker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(broker.waitFor(60, TimeUnit.SECONDS)).isTrue();

            assertThat(broker.exitValue()).as(output).isEqualTo(1);
            assertThat(output.lines().filter(l -> l.startsWith("skiffmq: "))).as(output).containsExactly(
                "skiffmq: cannot listen on 127.0.0.1:" + held.getLocalPort() + " (" + setting
                    + "): Address already in use; stop what holds it, or set " + setting + " to another port");
            assertThat(output).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }
}
