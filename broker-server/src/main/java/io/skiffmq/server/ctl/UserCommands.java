package io.skiffmq.server.ctl;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code add_user}, {@code delete_user}, {@code change_password}, {@code set_user_tags} and
 * {@code list_users}, through the HTTP API's users (administrators only, as there). A user that does not exist is
 * rabbitmqctl's {@code User "u" does not exist}, exit 67. One instance per run.
 */
final class UserCommands {
    private UserCommands() {
    }

    static String path(String user) {
        return "/api/users/" + ApiClient.segment(user);
    }

    static CtlException noSuchUser(String user) {
        return new CtlException(ExitCodes.NOUSER, "User \"" + user + "\" does not exist");
    }

    /** The user as the API has it (its {@code password_hash}, {@code tags}, ...). */
    static Map<?, ?> existing(ApiClient api, String user) {
        if (!(api.callOr404("GET", path(user), null, noSuchUser(user)) instanceof Map<?, ?> found)) {
            throw new CtlException(ExitCodes.SOFTWARE, "GET " + path(user) + ": expected a JSON object");
        }
        return found;
    }

    /** A command on one user. */
    abstract static class OnUser extends CtlCommand {
        @Parameters(index = "0", paramLabel = "username")
        String user;
    }

    @Command(name = "add_user", mixinStandardHelpOptions = true,
        description = "Adds a user with no tags and no permissions; fails if the user exists.")
    static final class AddUser extends OnUser {
        @Parameters(index = "1", paramLabel = "password")
        String password;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Adding user \"" + user + "\" ...");
            // the API's PUT would change an existing user's password; rabbitmqctl's add_user refuses instead
            if (api.send("GET", path(user), null, Map.of()).status() == 200) {
                throw new CtlException(ExitCodes.SOFTWARE, "User \"" + user + "\" already exists");
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("password", password);
            body.put("tags", "");
            api.call("PUT", path(user), body, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "delete_user", mixinStandardHelpOptions = true,
        description = "Deletes a user, its permissions, and closes its connections.")
    static final class DeleteUser extends OnUser {
        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Deleting user \"" + user + "\" ...");
            api.callOr404("DELETE", path(user), null, noSuchUser(user));
            return ExitCodes.OK;
        }
    }

    @Command(name = "change_password", mixinStandardHelpOptions = true, description = "Changes a user's password;"
        + " without the argument, reads it from the first line of standard input.")
    static final class ChangePassword extends OnUser {
        @Parameters(index = "1", arity = "0..1", paramLabel = "password")
        String password;

        @Override
        public Integer call() {
            String newPassword = password != null ? password : readPassword();
            ApiClient api = ctl.api();
            ctl.info("Changing password for user \"" + user + "\" ...");
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("password", newPassword);
            body.put("tags", existing(api, user).get("tags")); // the API's PUT replaces the user: keep its tags
            api.call("PUT", path(user), body, Map.of());
            return ExitCodes.OK;
        }

        /** rabbitmqctl's {@code Input.infer_password}: a prompt unless quiet, then one line, trimmed. */
        private String readPassword() {
            ctl.info("Password: ");
            String line;
            try {
                line = new BufferedReader(new InputStreamReader(ctl.in(), StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                line = null;
            }
            if (line == null || line.isEmpty()) {
                throw new CtlException(ExitCodes.SOFTWARE, "Password is not provided via argument or stdin");
            }
            return line.strip();
        }
    }

    @Command(name = "set_user_tags", mixinStandardHelpOptions = true,
        description = "Sets a user's tags (administrator, monitoring, policymaker, management, impersonator),"
            + " replacing its tags; none clears them.")
    static final class SetUserTags extends OnUser {
        @Parameters(index = "1..*", arity = "0..*", paramLabel = "tag")
        List<String> tags = new ArrayList<>();

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting tags for user \"" + user + "\" to [" + String.join(", ", tags) + "] ...");
            Map<?, ?> existing = existing(api, user);
            // the API's PUT replaces the user: send its password hash back unchanged with the new tags
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("password_hash", existing.get("password_hash"));
            body.put("hashing_algorithm", existing.get("hashing_algorithm"));
            body.put("tags", String.join(",", tags));
            api.call("PUT", path(user), body, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "list_users", mixinStandardHelpOptions = true, description = "Lists the users and their tags.")
    static final class ListUsers extends Listing {
        @Override
        List<String> defaults() {
            return List.of("user", "tags");
        }

        @Override
        String banner() {
            return "Listing users ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/users"), (user, row) -> row.put("user", user.get("name")));
        }
    }
}
