package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.config.ConfigLoader;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code default-user} and {@code default-pass} ({@code SKIFFMQ_DEFAULT_USER} and {@code SKIFFMQ_DEFAULT_PASS}, as
 * RabbitMQ's image takes {@code RABBITMQ_DEFAULT_USER}): the user a first start creates in guest's place, an
 * administrator with every permission on {@code /}; a later start keeps the data directory's users and says so.
 */
class DefaultUserTest {
    @TempDir
    Path dir;

    @Test
    void theEnvironmentVariablesAreSettings() {
        BrokerConfig config = ConfigLoader.load(new String[0], Map.of("SKIFFMQ_DEFAULT_USER", "admin",
            "SKIFFMQ_DEFAULT_PASS", "s3cret"), new Properties(), List.of()).config();
        assertThat(config.auth().defaultUser()).isEqualTo(new AuthSettings.DefaultUser("admin", "s3cret"));
        assertThat(config.auth().defaultUser().toString()).doesNotContain("s3cret");
        assertThat(BrokerConfig.defaults().auth().defaultUser()).isEqualTo(AuthSettings.DefaultUser.GUEST);
        assertThatThrownBy(() -> BrokerConfig.defaults().with("default-user", ""))
            .hasMessage("default-user must not be empty");
    }

    @Test
    void aFirstStartCreatesItInGuestsPlaceAndALaterStartKeepsTheUsersItHas() throws Exception {
        Path data = dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start("data-dir=" + data, "default-user=admin",
                "default-pass=s3cret")) {
            try (Connection connection = factory(broker, "admin", "s3cret").newConnection()) {
                connection.createChannel().queueDeclare("made-by-admin", true, false, false, null);
            }
            assertThatThrownBy(() -> factory(broker, "guest", "guest").newConnection())
                .as("no guest").isInstanceOf(AuthenticationFailureException.class);
            HttpApiClient http = new HttpApiClient(broker.managementPort(), "admin", "s3cret");
            assertThat(http.get("/api/whoami").map()).containsEntry("name", "admin")
                .containsEntry("tags", List.of("administrator"));
            assertThat(http.get("/api/users").list()).extracting(u -> u.get("name")).containsExactly("admin");
            assertThat(http.get("/api/permissions/%2F/admin").map()).containsEntry("configure", ".*")
                .containsEntry("write", ".*").containsEntry("read", ".*");
        }
        try (LogCapture log = LogCapture.capture(); RunningBroker broker = RunningBroker.start("data-dir=" + data,
                "default-user=admin", "default-pass=changed")) {
            try (Connection connection = factory(broker, "admin", "s3cret").newConnection()) {
                assertThat(connection.isOpen()).as("the first start's password holds").isTrue();
            }
            assertThat(log.lines(Level.INFO, l -> l.contains("default-user and default-pass apply to a first start"
                + " only, and this data directory has its users already: user 'admin' has another password")))
                .hasSize(1);
            assertThat(log.events(Level.INFO).stream().map(ILoggingEvent::getFormattedMessage))
                .noneMatch(line -> line.contains("changed"));
        }
    }

    private static ConnectionFactory factory(RunningBroker broker, String user, String password) {
        return VirtualHostTest.factory(broker, "/", user, password);
    }
}
