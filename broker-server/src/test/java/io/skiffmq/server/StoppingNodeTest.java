package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stopping node, as the HTTP API, {@code skiffmqctl} and the container's {@link HealthProbe} see it: in-process
 * (the state entered by hand, everything checked at leisure), then end to end, a broker in a child JVM sent SIGTERM
 * while a raw 0-9-1 client holds its connection: the broker has sent {@code connection.close} and waits for the
 * client's {@code close-ok}, so until the client answers, the node is stopping and its HTTP API still up.
 */
class StoppingNodeTest {
    private static final Map<String, Object> STOPPING = Map.of("status", "failed", "reason", "node is stopping");

    @TempDir
    Path dataDir;

    @Test
    void aStoppingNodeFailsItsHealthChecksAndShowsAsNotRunning() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient http = HttpApiClient.guest(broker);
            assertThat(http.get("/api/health/checks/virtual-hosts").status()).isEqualTo(200);
            assertThat(http.get("/api/nodes").list().get(0)).containsEntry("running", true);

            broker.beginStopping();

            for (String check : List.of("alarms", "local-alarms", "virtual-hosts", "port-listener/" + broker.port(),
                    "is-in-service")) {
                HttpApiClient.Answer answer = http.get("/api/health/checks/" + check);
                assertThat(answer.status()).as(check).isEqualTo(503);
                assertThat(answer.map()).as(check).isEqualTo(STOPPING);
            }
            assertThat(http.get("/api/nodes").list().get(0)).containsEntry("running", false);
            assertThat(http.get("/api/overview").map()).containsEntry("running", false);

            SkiffmqCtlTest.Result status = SkiffmqCtlTest.ctl(broker.managementPort(), "status");
            assertThat(status.code()).isZero();
            assertThat(status.lines()).contains("State: stopping");
            SkiffmqCtlTest.Result await = SkiffmqCtlTest.ctl(broker.managementPort(), "await_startup");
            assertThat(await.code()).isEqualTo(69);
            assertThat(await.err()).contains("is stopping");

            // the Docker HEALTHCHECK's command, as a process of its own (its check, without a user)
            Process probe = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HealthProbe.class.getName(),
                "http://127.0.0.1:" + broker.managementPort() + "/api/health/checks/is-in-service")
                .redirectErrorStream(true).start();
            String said = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(probe.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.exitValue()).as(said).isEqualTo(1);
            assertThat(said).contains("skiffmq health check failed: 503").contains("node is stopping");
        }
    }

    @Test
    void sigtermMakesTheNodeStoppingWhileAClientHoldsItsCloseBack() throws Exception {
        try (ChildBroker broker = ChildBroker.start(dataDir, "stopping", List.of("-Xmx256m"), List.of())) {
            int managementPort = broker.managementPort();
            HttpApiClient http = new HttpApiClient(managementPort, "guest", "guest");
            assertThat(http.get("/api/health/checks/virtual-hosts").status()).isEqualTo(200);
            try (Raw091Client client = new Raw091Client("127.0.0.1", broker.port)) {
                AMQP.Connection.Tune tune = client.start();
                client.tuneOk(tune.getChannelMax(), tune.getFrameMax(), 0);
                client.send(0, new AMQP.Connection.Open.Builder().virtualHost("/").build());
                client.expect(AMQP.Connection.OpenOk.class);

                broker.process.toHandle().destroy(); // SIGTERM
                AMQP.Connection.Close close = client.expect(AMQP.Connection.Close.class);
                assertThat(close.getReplyCode()).isEqualTo(320);

                // the broker waits for our close-ok (or its timeout): the node is stopping, its HTTP API up
                HttpApiClient.Answer health = http.get("/api/health/checks/virtual-hosts");
                assertThat(health.status()).isEqualTo(503);
                assertThat(health.map()).isEqualTo(STOPPING);
                assertThat(http.get("/api/nodes").list().get(0)).containsEntry("running", false);
                assertThat(SkiffmqCtlTest.ctl(managementPort, "await_startup").code()).isEqualTo(69);

                client.send(0, new AMQP.Connection.CloseOk.Builder().build());
                assertThat(broker.process.waitFor(60, TimeUnit.SECONDS)).as("stopped").isTrue();
            }
            assertThat(broker.process.exitValue()).isEqualTo(143);
        }
    }
}
