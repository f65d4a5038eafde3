package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** The container health check: ok against a running broker, a reason when refused or when nothing listens. */
class HealthProbeTest {
    @Test
    void okFromARunningBrokerAndAReasonOtherwise() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            URI check = URI.create("http://127.0.0.1:" + broker.managementPort()
                + "/api/health/checks/virtual-hosts");
            assertThat(HealthProbe.check(check, "guest", "guest")).isNull();
            assertThat(HealthProbe.check(check, "guest", "wrong")).startsWith("401");
        }
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        assertThat(HealthProbe.check(URI.create("http://127.0.0.1:" + closed + "/api/health/checks/alarms"), "guest",
            "guest")).contains("ConnectException");
    }
}
