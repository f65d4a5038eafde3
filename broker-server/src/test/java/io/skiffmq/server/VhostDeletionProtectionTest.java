package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * RabbitMQ 4.1's virtual host deletion protection: {@code POST}/{@code DELETE /api/vhosts/{vhost}/deletion/protection},
 * a {@code DELETE} of a protected virtual host refused with RabbitMQ's 412, the {@code protected_from_deletion}
 * metadata shown, exported, imported and kept across a restart, and a {@code PUT /api/vhosts} that leaves it alone
 * as RabbitMQ 4.1's does.
 */
@ExtendWith(LeakDetection.class)
class VhostDeletionProtectionTest {
    @TempDir
    Path dir;

    @Test
    void aProtectedVirtualHostIsNotDeletedUntilTheProtectionIsLifted() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(api.put("/api/vhosts/kept", Map.of("description", "do not lose")).status()).isEqualTo(201);
            assertThat(api.get("/api/vhosts/kept").map()).containsEntry("protected_from_deletion", false);
            assertThat(api.post("/api/vhosts/kept/deletion/protection", Map.of()).status()).isEqualTo(204);
            Map<String, Object> kept = api.get("/api/vhosts/kept").map();
            assertThat(kept).containsEntry("protected_from_deletion", true);
            assertThat(kept.get("metadata")).isEqualTo(Map.of("description", "do not lose", "tags", List.of(),
                "default_queue_type", "classic", "protected_from_deletion", true));

            HttpApiClient.Answer refused = api.delete("/api/vhosts/kept");
            assertThat(refused.status()).isEqualTo(412);
            assertThat(refused.map()).containsEntry("error", "precondition_failed").containsEntry("reason",
                "Refusing to delete virtual host 'kept' because it is protected from deletion");
            assertThat(api.get("/api/vhosts/kept").status()).isEqualTo(200);

            // RabbitMQ 4.1's PUT takes description, tags and default queue type only: the protection stays,
            // and a protected_from_deletion in the body changes nothing
            assertThat(api.put("/api/vhosts/kept", Map.of("description", "changed", "protected_from_deletion",
                false)).status()).isEqualTo(204);
            assertThat(api.get("/api/vhosts/kept").map()).containsEntry("description", "changed")
                .containsEntry("protected_from_deletion", true);
            assertThat(api.put("/api/vhosts/other", Map.of("protected_from_deletion", true)).status())
                .isEqualTo(201);
            assertThat(api.get("/api/vhosts/other").map()).containsEntry("protected_from_deletion", false);

            HttpApiClient.Answer missing = api.post("/api/vhosts/none/deletion/protection", Map.of());
            assertThat(missing.status()).isEqualTo(404);
            assertThat(missing.map()).containsEntry("reason", "Cannot enable deletion protection of virtual host "
                + "'none' because it does not exist");
            assertThat(api.delete("/api/vhosts/none/deletion/protection").status()).isEqualTo(404);
            broker.admin().putUser("watcher", "watcher-pw", List.of("monitoring"));
            HttpApiClient.Answer notAdmin = new HttpApiClient(broker.managementPort(), "watcher", "watcher-pw")
                .delete("/api/vhosts/kept/deletion/protection");
            assertThat(notAdmin.status()).isEqualTo(401);
            assertThat(notAdmin.map()).containsEntry("reason", "Not administrator user");
        }
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(api.get("/api/vhosts/kept").map()).as("durable").containsEntry("protected_from_deletion",
                true).containsEntry("description", "changed");
            assertThat(api.delete("/api/vhosts/kept").status()).isEqualTo(412);
            assertThat(api.delete("/api/vhosts/kept/deletion/protection").status()).isEqualTo(204);
            assertThat(api.get("/api/vhosts/kept").map()).containsEntry("protected_from_deletion", false);
            assertThat(api.delete("/api/vhosts/kept").status()).isEqualTo(204);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theProtectionIsExportedAndImported() throws Exception {
        Map<String, Object> exported;
        try (RunningBroker source = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(source);
            assertThat(api.put("/api/vhosts/guarded", Map.of()).status()).isEqualTo(201);
            assertThat(api.post("/api/vhosts/guarded/deletion/protection", Map.of()).status()).isEqualTo(204);
            exported = api.get("/api/definitions").map();
            assertThat((List<Map<String, Object>>) exported.get("vhosts"))
                .filteredOn(v -> "guarded".equals(v.get("name"))).singleElement()
                .satisfies(v -> assertThat(v).containsEntry("protected_from_deletion", true)
                    .extractingByKey("metadata").isEqualTo(Map.of("description", "", "tags", List.of(),
                        "default_queue_type", "classic", "protected_from_deletion", true)));
        }
        try (RunningBroker target = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(target);
            assertThat(api.post("/api/definitions", exported).status()).isEqualTo(204);
            assertThat(api.delete("/api/vhosts/guarded").status()).isEqualTo(412);

            // as RabbitMQ's update_metadata: false lifts the protection, no key leaves it as it is
            Map<String, Object> unprotect = Map.of("vhosts", List.of(Map.of("name", "guarded", "metadata",
                Map.of("protected_from_deletion", false))));
            Map<String, Object> silent = Map.of("vhosts", List.of(Map.of("name", "guarded", "metadata", Map.of())));
            assertThat(api.post("/api/definitions", silent).status()).isEqualTo(204);
            assertThat(api.get("/api/vhosts/guarded").map()).containsEntry("protected_from_deletion", true);
            assertThat(api.post("/api/definitions", unprotect).status()).isEqualTo(204);
            assertThat(api.delete("/api/vhosts/guarded").status()).isEqualTo(204);
        }
    }
}
