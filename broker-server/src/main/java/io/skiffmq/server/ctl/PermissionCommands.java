package io.skiffmq.server.ctl;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's permission and topic permission commands ({@code -p} names the virtual host): set, clear and list,
 * through the HTTP API's {@code /api/permissions} and {@code /api/topic-permissions} (administrators only, as
 * there). Clearing what is not there does nothing, as in rabbitmqctl. One instance per run.
 */
final class PermissionCommands {
    private PermissionCommands() {
    }

    private static String path(String kind, String vhost, String user) {
        return "/api/" + kind + "/" + ApiClient.segment(vhost) + "/" + ApiClient.segment(user);
    }

    /**
     * PUTs a permission. The API refuses a missing user or virtual host alike; rabbitmqctl says which: a user as
     * {@code User u does not exist} (67), a virtual host as {@code Virtual host v does not exist} (69, its code for
     * that error).
     */
    private static void put(ApiClient api, String path, Map<String, Object> body, String user, String vhost) {
        ApiClient.Answer answer = api.send("PUT", path, body, Map.of());
        if (answer.status() == 400 && "vhost_or_user_not_found".equals(answer.reason())) {
            if (api.send("GET", UserCommands.path(user), null, Map.of()).status() == 404) {
                throw new CtlException(ExitCodes.NOUSER, "User " + user + " does not exist");
            }
            throw new CtlException(ExitCodes.UNAVAILABLE, "Virtual host " + vhost + " does not exist");
        }
        ApiClient.ok("PUT", path, answer);
    }

    @Command(name = "set_permissions", mixinStandardHelpOptions = true,
        description = "Sets a user's configure, write and read permissions (regular expressions) in a virtual host.")
    static final class SetPermissions extends UserCommands.OnUser {
        @Parameters(index = "1", paramLabel = "conf")
        String configure;

        @Parameters(index = "2", paramLabel = "write")
        String write;

        @Parameters(index = "3", paramLabel = "read")
        String read;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting permissions for user \"" + user + "\" in vhost \"" + ctl.vhost + "\" ...");
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("configure", configure);
            body.put("write", write);
            body.put("read", read);
            put(api, path("permissions", ctl.vhost, user), body, user, ctl.vhost);
            return ExitCodes.OK;
        }
    }

    @Command(name = "clear_permissions", mixinStandardHelpOptions = true,
        description = "Takes a user's permissions in a virtual host away.")
    static final class ClearPermissions extends UserCommands.OnUser {
        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Clearing permissions for user \"" + user + "\" in vhost \"" + ctl.vhost + "\" ...");
            api.callOr404("DELETE", path("permissions", ctl.vhost, user), null, null);
            return ExitCodes.OK;
        }
    }

    @Command(name = "set_topic_permissions", mixinStandardHelpOptions = true, description = "Sets a user's"
        + " topic permissions (write and read regular expressions over routing keys) for a topic exchange.")
    static final class SetTopicPermissions extends UserCommands.OnUser {
        @Parameters(index = "1", paramLabel = "exchange")
        String exchange;

        @Parameters(index = "2", paramLabel = "write")
        String write;

        @Parameters(index = "3", paramLabel = "read")
        String read;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting topic permissions on \"" + exchange + "\" for user \"" + user + "\" in vhost \""
                + ctl.vhost + "\" ...");
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("exchange", exchange);
            body.put("write", write);
            body.put("read", read);
            put(api, path("topic-permissions", ctl.vhost, user), body, user, ctl.vhost);
            return ExitCodes.OK;
        }
    }

    @Command(name = "clear_topic_permissions", mixinStandardHelpOptions = true,
        description = "Takes a user's topic permissions in a virtual host away, or those for one exchange.")
    static final class ClearTopicPermissions extends UserCommands.OnUser {
        @Parameters(index = "1", arity = "0..1", paramLabel = "exchange")
        String exchange;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Clearing topic permissions " + (exchange == null ? "" : "on \"" + exchange + "\" ")
                + "for user \"" + user + "\" in vhost \"" + ctl.vhost + "\" ...");
            String path = path("topic-permissions", ctl.vhost, user)
                + (exchange == null ? "" : "/" + ApiClient.segment(exchange));
            api.callOr404("DELETE", path, null, null);
            return ExitCodes.OK;
        }
    }

    /** The permissions or topic permissions of every user in the {@code -p} virtual host. */
    abstract static class InVhost extends Listing {
        /** {@code permissions} or {@code topic permissions}. */
        abstract String kind();

        @Override
        String banner() {
            return "Listing " + kind() + " for vhost \"" + ctl.vhost + "\" ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list(VhostCommands.path(ctl.vhost) + "/" + kind().replace(' ', '-'),
                VhostCommands.noSuchVhost(ctl.vhost));
        }
    }

    @Command(name = "list_permissions", mixinStandardHelpOptions = true,
        description = "Lists the users' permissions in a virtual host.")
    static final class ListPermissions extends InVhost {
        @Override
        List<String> defaults() {
            return List.of("user", "configure", "write", "read");
        }

        @Override
        String kind() {
            return "permissions";
        }
    }

    @Command(name = "list_topic_permissions", mixinStandardHelpOptions = true,
        description = "Lists the users' topic permissions in a virtual host.")
    static final class ListTopicPermissions extends InVhost {
        @Override
        List<String> defaults() {
            return List.of("user", "exchange", "write", "read");
        }

        @Override
        String kind() {
            return "topic permissions";
        }
    }

    /** One user's permissions or topic permissions in every virtual host. */
    abstract static class OfUser extends Listing {
        @Parameters(index = "0", paramLabel = "username")
        String user;

        /** {@code permissions} or {@code topic permissions}. */
        abstract String kind();

        @Override
        String banner() {
            return "Listing " + kind() + " for user \"" + user + "\" ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list(UserCommands.path(user) + "/" + kind().replace(' ', '-'), UserCommands.noSuchUser(user));
        }
    }

    @Command(name = "list_user_permissions", mixinStandardHelpOptions = true,
        description = "Lists a user's permissions in every virtual host.")
    static final class ListUserPermissions extends OfUser {
        @Override
        List<String> defaults() {
            return List.of("vhost", "configure", "write", "read");
        }

        @Override
        String kind() {
            return "permissions";
        }
    }

    /** rabbitmqctl prints this one without a header line unless asked ({@code table_headers} false). */
    @Command(name = "list_user_topic_permissions", mixinStandardHelpOptions = true,
        description = "Lists a user's topic permissions in every virtual host.")
    static final class ListUserTopicPermissions extends OfUser {
        @Override
        List<String> defaults() {
            return List.of("vhost", "exchange", "write", "read");
        }

        @Override
        String kind() {
            return "topic permissions";
        }

        @Override
        boolean headersByDefault() {
            return false;
        }
    }
}
