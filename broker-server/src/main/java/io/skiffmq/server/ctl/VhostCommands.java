package io.skiffmq.server.ctl;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code add_vhost}, {@code delete_vhost}, {@code list_vhosts} and RabbitMQ 4.1's
 * {@code enable_vhost_deletion_protection} and {@code disable_vhost_deletion_protection}, through the HTTP API's
 * vhosts. One instance per run.
 */
final class VhostCommands {
    private VhostCommands() {
    }

    static String path(String vhost) {
        return "/api/vhosts/" + ApiClient.segment(vhost);
    }

    /** rabbitmqctl's error for a virtual host that is not there ({@code no_such_vhost}: exit 65). */
    static CtlException noSuchVhost(String vhost) {
        return new CtlException(ExitCodes.DATA_ERROR, "Virtual host '" + vhost + "' does not exist");
    }

    /** A command on one virtual host, named by its argument. */
    abstract static class OnVhost extends CtlCommand {
        @Parameters(index = "0", paramLabel = "vhost")
        String vhost;
    }

    @Command(name = "add_vhost", mixinStandardHelpOptions = true,
        description = "Adds a virtual host (nothing happens if it exists).")
    static final class AddVhost extends OnVhost {
        @Option(names = "--description", description = "what the virtual host is for")
        String description;

        @Option(names = "--tags", description = "comma-separated tags")
        String tags;

        @Option(names = "--default-queue-type", description = "classic, quorum or stream: the type of queues "
            + "declared there without x-queue-type")
        String defaultQueueType;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Adding vhost \"" + vhost + "\" ...");
            if (api.send("GET", path(vhost), null, Map.of()).status() == 200) {
                return ExitCodes.OK; // a PUT would reset its description and tags
            }
            Map<String, Object> body = new LinkedHashMap<>();
            if (description != null) {
                body.put("description", description);
            }
            if (tags != null) {
                body.put("tags", tags);
            }
            if (defaultQueueType != null) {
                body.put("default_queue_type", defaultQueueType);
            }
            api.call("PUT", path(vhost), body, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "delete_vhost", mixinStandardHelpOptions = true, description = "Deletes a virtual host, with"
        + " its queues, exchanges, bindings and permissions, and closes its connections.")
    static final class DeleteVhost extends OnVhost {
        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Deleting vhost \"" + vhost + "\" ...");
            ApiClient.Answer answer = api.send("DELETE", path(vhost), null, Map.of());
            if (answer.status() == 404) {
                throw noSuchVhost(vhost);
            }
            if (answer.status() == 412) {
                // rabbitmqctl's words for {error, protected_from_deletion}
                throw new CtlException(ExitCodes.DATA_ERROR, "Cannot delete this virtual host: it is protected from "
                    + "deletion. To lift the protection, inspect and update its metadata");
            }
            ApiClient.ok("DELETE", path(vhost), answer);
            return ExitCodes.OK;
        }
    }

    @Command(name = "enable_vhost_deletion_protection", mixinStandardHelpOptions = true,
        description = "Protects a virtual host from deletion (until the protection is removed).")
    static final class EnableDeletionProtection extends OnVhost {
        @Override
        public Integer call() {
            ctl.info("Protecting virtual host \"" + vhost + "\" from removal by updating its metadata...");
            ctl.api().callOr404("POST", path(vhost) + "/deletion/protection", Map.of(), noSuchVhost(vhost));
            return ExitCodes.OK;
        }
    }

    @Command(name = "disable_vhost_deletion_protection", mixinStandardHelpOptions = true,
        description = "Removes deletion protection from a virtual host (so that it can be deleted).")
    static final class DisableDeletionProtection extends OnVhost {
        @Override
        public Integer call() {
            ctl.info("Removing deletion protection from virtual host \"" + vhost + "\" by updating its metadata...");
            ctl.api().callOr404("DELETE", path(vhost) + "/deletion/protection", null, noSuchVhost(vhost));
            return ExitCodes.OK;
        }
    }

    @Command(name = "list_vhosts", mixinStandardHelpOptions = true,
        description = "Lists the virtual hosts (default column: name).")
    static final class ListVhosts extends Listing.WithColumns {
        @Override
        List<String> defaults() {
            return List.of("name");
        }

        @Override
        List<String> supported() {
            return List.of("name", "description", "tags", "default_queue_type", "protected_from_deletion", "tracing",
                "cluster_state", "metadata");
        }

        @Override
        String banner() {
            return "Listing vhosts ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/vhosts");
        }
    }
}
