package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.URI;
import org.junit.jupiter.api.Test;

/**
 * The container health check: its default check, is-in-service, needs no user, so it passes once guest is deleted
 * (the usual hardening) and fails once the node is stopping; checks that need a user still do; a reason when
 * nothing listens.
 */
class HealthProbeTest {
    @Test
    void theDefaultCheckNeedsNoUserAndOutlivesGuest() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            String base = "http://127.0.0.1:" + broker.managementPort() + "/api/health/checks/";
            URI inService = URI.create(base + "is-in-service");
            assertThat(HealthProbe.DEFAULT_URL).endsWith("/api/health/checks/is-in-service");
            assertThat(HealthProbe.check(inService, null, null)).isNull();
            assertThat(HealthProbe.check(inService, "guest", "wrong")).as("credentials are not looked at").isNull();
            URI virtualHosts = URI.create(base + "virtual-hosts");
            assertThat(HealthProbe.check(virtualHosts, "guest", "guest")).isNull();
            assertThat(HealthProbe.check(virtualHosts, null, null)).startsWith("401");
            assertThat(HealthProbe.check(virtualHosts, "guest", "wrong")).startsWith("401");

            broker.admin().putUser("ops", "s3cret", java.util.List.of("administrator"));
            assertThat(broker.admin().deleteUser("guest")).isTrue();
            assertThat(HealthProbe.check(inService, null, null)).as("guest is gone").isNull();
            assertThat(HealthProbe.check(virtualHosts, "guest", "guest")).startsWith("401");

            broker.beginStopping();
            assertThat(HealthProbe.check(inService, null, null))
                .isEqualTo("503 {\"status\":\"failed\",\"reason\":\"node is stopping\"}");
        }
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        assertThat(HealthProbe.check(URI.create("http://127.0.0.1:" + closed + "/api/health/checks/is-in-service"),
            null, null)).contains("ConnectException");
    }
}
