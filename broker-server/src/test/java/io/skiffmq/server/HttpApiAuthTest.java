package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Basic authentication and RabbitMQ's tag rules: bad or missing credentials get 401 with
 * {@code WWW-Authenticate}; a user without a management tag, or whose tag does not allow the request, gets 401
 * {@code not_authorised} with RabbitMQ's reason; a management user sees only its virtual hosts and connections.
 */
@ExtendWith(LeakDetection.class)
class HttpApiAuthTest {
    private static RunningBroker broker;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        port = broker.managementPort();
        Admin admin = broker.admin();
        admin.putUser("mgmt", "mgmt-pw", List.of("management"));
        admin.putUser("watcher", "watcher-pw", List.of("monitoring"));
        admin.putUser("plain", "plain-pw", List.of());
        admin.createVhost("own");
        admin.createVhost("other");
        admin.setPermissions("mgmt", "own", ".*", ".*", ".*");
        broker.vhost("other").declareQueue("hidden");
        broker.vhost("own").declareQueue("visible");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static HttpApiClient as(String user, String password) {
        return new HttpApiClient(port, user, password);
    }

    @Test
    void missingOrWrongCredentialsAre401WithAChallenge() throws Exception {
        for (HttpApiClient client : List.of(as(null, null), as("guest", "wrong"), as("nobody", "x"))) {
            HttpApiClient.Answer answer = client.get("/api/overview");
            assertThat(answer.status()).isEqualTo(401);
            assertThat(answer.raw().headers().firstValue("www-authenticate"))
                .hasValue("Basic realm=\"RabbitMQ Management\"");
            assertThat(answer.map()).isEqualTo(Map.of("error", "not_authorized", "reason", "Not_Authorized"));
        }
    }

    @Test
    void aUserWithoutAManagementTagMayNotUseTheApi() throws Exception {
        HttpApiClient.Answer answer = as("plain", "plain-pw").get("/api/whoami");
        assertThat(answer.status()).isEqualTo(401);
        assertThat(answer.map()).isEqualTo(Map.of("error", "not_authorised", "reason", "Not management user"));
        assertThat(answer.raw().headers().firstValue("www-authenticate")).isEmpty();
    }

    @Test
    void aManagementUserSeesItsOwnVirtualHostsAndNoUsers() throws Exception {
        HttpApiClient mgmt = as("mgmt", "mgmt-pw");
        assertThat(mgmt.get("/api/whoami").map()).containsEntry("tags", List.of("management"));
        HttpApiClient.Answer users = mgmt.get("/api/users");
        assertThat(users.status()).isEqualTo(401);
        assertThat(users.map()).isEqualTo(Map.of("error", "not_authorised", "reason", "Not administrator user"));
        assertThat(mgmt.get("/api/definitions").status()).isEqualTo(401);
        assertThat(mgmt.put("/api/vhosts/mine", Map.of()).status()).isEqualTo(401);
        assertThat(mgmt.get("/api/nodes").map()).containsEntry("reason", "Not monitor user");

        assertThat(mgmt.get("/api/vhosts").list()).extracting(v -> v.get("name")).containsExactly("own");
        assertThat(mgmt.get("/api/queues").list()).extracting(q -> q.get("name")).containsExactly("visible");
        HttpApiClient.Answer other = mgmt.get("/api/queues/other");
        assertThat(other.status()).isEqualTo(401);
        assertThat(other.map()).containsEntry("reason", "User not authorised to access virtual host");
        assertThat(mgmt.put("/api/queues/other/q", Map.of()).status()).isEqualTo(401);
        assertThat(mgmt.put("/api/queues/own/made-by-mgmt", Map.of("durable", false)).status()).isEqualTo(201);
    }

    @Test
    void permissionsStillApplyToWhatAManagementUserDoes() throws Exception {
        broker.admin().putUser("reader", "reader-pw", List.of("management"));
        broker.admin().setPermissions("reader", "own", "^$", "^$", ".*");
        HttpApiClient reader = as("reader", "reader-pw");
        HttpApiClient.Answer declare = reader.put("/api/queues/own/not-mine", Map.of());
        assertThat(declare.status()).isEqualTo(401);
        assertThat(declare.map()).containsEntry("error", "not_authorised");
        assertThat((String) declare.map().get("reason")).contains("configure");
        assertThat(reader.get("/api/queues/own/visible").status()).isEqualTo(200);
    }

    @Test
    void aMonitoringUserSeesEverythingButChangesNothingGlobal() throws Exception {
        HttpApiClient watcher = as("watcher", "watcher-pw");
        assertThat(watcher.get("/api/nodes").status()).isEqualTo(200);
        assertThat(watcher.get("/api/queues").list()).extracting(q -> q.get("name"))
            .contains("visible", "hidden");
        assertThat(watcher.get("/api/users").status()).isEqualTo(401);
        assertThat(watcher.delete("/api/vhosts/other").status()).isEqualTo(401);
        assertThat(broker.admin().vhosts()).contains("other");
    }

    @Test
    void administratorsManageUsersVhostsAndPermissions() throws Exception {
        HttpApiClient guest = HttpApiClient.guest(broker);
        assertThat(guest.put("/api/vhosts/made", Map.of()).status()).isEqualTo(201);
        assertThat(guest.get("/api/permissions/made/guest").map()).as("the creator's, as in RabbitMQ")
            .containsEntry("configure", ".*").containsEntry("write", ".*").containsEntry("read", ".*");
        assertThat(guest.put("/api/permissions/made/guest", Map.of("configure", "", "write", "", "read", "^r"))
            .status()).isEqualTo(204);
        assertThat(guest.put("/api/vhosts/made", Map.of()).status()).isEqualTo(204);
        assertThat(guest.get("/api/permissions/made/guest").map()).as("an existing vhost's are left alone")
            .containsEntry("read", "^r");
        assertThat(guest.put("/api/users/newcomer", Map.of("password", "pw", "tags", "monitoring,management"))
            .status()).isEqualTo(201);
        assertThat(guest.put("/api/permissions/made/newcomer", Map.of("configure", ".*", "write", ".*",
            "read", "^r")).status()).isEqualTo(201);
        HttpApiClient newcomer = as("newcomer", "pw");
        assertThat(newcomer.get("/api/whoami").map()).containsEntry("tags", List.of("monitoring", "management"));
        assertThat(guest.get("/api/permissions/made/newcomer").map()).containsEntry("read", "^r");
        assertThat(guest.put("/api/permissions/made/nobody", Map.of("configure", "", "write", "", "read", ""))
            .status()).isEqualTo(400);
        assertThat(guest.put("/api/permissions/made/newcomer", Map.of("configure", "(", "write", "", "read", ""))
            .status()).isEqualTo(400);
        assertThat(guest.delete("/api/permissions/made/newcomer").status()).isEqualTo(204);
        assertThat(guest.get("/api/permissions/made/newcomer").status()).isEqualTo(404);
        assertThat(guest.delete("/api/users/newcomer").status()).isEqualTo(204);
        assertThat(newcomer.get("/api/whoami").status()).isEqualTo(401);
        assertThat(guest.delete("/api/users/newcomer").status()).isEqualTo(404);
        assertThat(guest.delete("/api/vhosts/made").status()).isEqualTo(204);
        assertThat(guest.get("/api/vhosts/made").status()).isEqualTo(404);
    }
}
