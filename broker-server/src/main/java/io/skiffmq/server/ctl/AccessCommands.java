package io.skiffmq.server.ctl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * rabbitmqctl's {@code add_user}, {@code set_user_tags}, {@code set_permissions} and {@code add_vhost}, through
 * the HTTP API's users, permissions and vhosts (administrator users only, as there). One instance per run.
 */
final class AccessCommands {
    private AccessCommands() {
    }

    @Command(name = "add_user", mixinStandardHelpOptions = true,
        description = "Adds a user with no tags and no permissions; fails if the user exists.")
    static final class AddUser implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Parameters(index = "0", paramLabel = "username")
        String user;

        @Parameters(index = "1", paramLabel = "password")
        String password;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Adding user \"" + user + "\" ...");
            String path = "/api/users/" + ApiClient.segment(user);
            // the API's PUT would change an existing user's password; rabbitmqctl's add_user refuses instead
            if (api.send("GET", path, null, Map.of()).status() == 200) {
                throw new CtlException(ExitCodes.SOFTWARE, "User \"" + user + "\" already exists");
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("password", password);
            body.put("tags", "");
            api.call("PUT", path, body, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "set_user_tags", mixinStandardHelpOptions = true,
        description = "Sets a user's tags (administrator, monitoring, policymaker, management), replacing its"
            + " tags; none clears them.")
    static final class SetUserTags implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Parameters(index = "0", paramLabel = "username")
        String user;

        @Parameters(index = "1..*", arity = "0..*", paramLabel = "tag")
        List<String> tags = new ArrayList<>();

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting tags for user \"" + user + "\" to [" + String.join(", ", tags) + "] ...");
            String path = "/api/users/" + ApiClient.segment(user);
            // the API's PUT replaces the user: send its password hash back unchanged with the new tags
            if (!(api.get(path) instanceof Map<?, ?> existing)) {
                throw new CtlException(ExitCodes.SOFTWARE, "GET " + path + ": expected a JSON object");
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("password_hash", existing.get("password_hash"));
            body.put("hashing_algorithm", existing.get("hashing_algorithm"));
            body.put("tags", String.join(",", tags));
            api.call("PUT", path, body, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "set_permissions", mixinStandardHelpOptions = true,
        description = "Sets a user's configure, write and read permissions (regular expressions) in a virtual host.")
    static final class SetPermissions implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Option(names = {"-p", "--vhost"}, defaultValue = "/", description = "the virtual host (default: /)")
        String vhost;

        @Parameters(index = "0", paramLabel = "username")
        String user;

        @Parameters(index = "1", paramLabel = "conf")
        String configure;

        @Parameters(index = "2", paramLabel = "write")
        String write;

        @Parameters(index = "3", paramLabel = "read")
        String read;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting permissions for user \"" + user + "\" in vhost \"" + vhost + "\" ...");
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("configure", configure);
            body.put("write", write);
            body.put("read", read);
            api.call("PUT", "/api/permissions/" + ApiClient.segment(vhost) + "/" + ApiClient.segment(user), body,
                Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "add_vhost", mixinStandardHelpOptions = true,
        description = "Adds a virtual host (nothing happens if it exists).")
    static final class AddVhost implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Parameters(index = "0", paramLabel = "vhost")
        String vhost;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Adding vhost \"" + vhost + "\" ...");
            api.call("PUT", "/api/vhosts/" + ApiClient.segment(vhost), Map.of(), Map.of());
            return ExitCodes.OK;
        }
    }
}
