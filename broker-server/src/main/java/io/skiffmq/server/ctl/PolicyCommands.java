package io.skiffmq.server.ctl;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's policy and operator policy commands ({@code -p} names the virtual host): set (with
 * {@code --priority} and {@code --apply-to}), clear and list, through the HTTP API's {@code /api/policies} and
 * {@code /api/operator-policies}. rabbitmqctl's words and exit codes: a refused policy is its "Validation failed"
 * text (69), clearing what is not there "Parameter does not exist" (69), a missing virtual host 65. One instance per
 * run.
 */
final class PolicyCommands {
    private PolicyCommands() {
    }

    private static String path(boolean operator, String vhost) {
        return (operator ? "/api/operator-policies/" : "/api/policies/") + ApiClient.segment(vhost);
    }

    /** What rabbitmqctl's banners call a policy or an operator policy. */
    private static String kind(boolean operator) {
        return operator ? "operator policy override" : "policy";
    }

    abstract static class SetPolicy extends CtlCommand {
        @Option(names = "--priority", paramLabel = "priority", defaultValue = "0")
        int priority;

        @Option(names = "--apply-to", paramLabel = "apply-to", defaultValue = "all")
        String applyTo;

        @Parameters(index = "0", paramLabel = "name")
        String name;

        @Parameters(index = "1", paramLabel = "pattern")
        String pattern;

        @Parameters(index = "2", paramLabel = "definition")
        String definition;

        abstract boolean operator();

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Setting " + kind(operator()) + " \"" + name + "\" for pattern \"" + pattern + "\" to \""
                + definition + "\" with priority \"" + priority + "\" for vhost \"" + ctl.vhost + "\" ...");
            Object parsed;
            try {
                parsed = ApiClient.JSON.readValue(definition, Object.class);
            } catch (RuntimeException e) {
                throw new CtlException(ExitCodes.DATA_ERROR, "Could not parse JSON document: " + e.getMessage());
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("pattern", pattern);
            body.put("definition", parsed);
            body.put("priority", priority);
            body.put("apply-to", applyTo);
            String path = path(operator(), ctl.vhost) + "/" + ApiClient.segment(name);
            ApiClient.Answer answer = api.send("PUT", path, body, Map.of());
            if (answer.status() == 404) {
                throw VhostCommands.noSuchVhost(ctl.vhost);
            }
            if (answer.status() == 400) {
                throw new CtlException(ExitCodes.UNAVAILABLE, "\n" + unescape(answer.reason()));
            }
            ApiClient.ok("PUT", path, answer);
            return ExitCodes.OK;
        }
    }

    /** The HTTP API escapes a policy's refusal as HTML; rabbitmqctl prints it plain. */
    private static String unescape(String reason) {
        return reason.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    }

    @Command(name = "set_policy", mixinStandardHelpOptions = true, description = "Sets or updates a policy:"
        + " its definition applies to the queues and exchanges whose names match the pattern.")
    static final class SetUserPolicy extends SetPolicy {
        @Override
        boolean operator() {
            return false;
        }
    }

    @Command(name = "set_operator_policy", mixinStandardHelpOptions = true, description = "Sets or updates an"
        + " operator policy: limits merged over the user policy of the queues whose names match the pattern.")
    static final class SetOperatorPolicy extends SetPolicy {
        @Override
        boolean operator() {
            return true;
        }
    }

    abstract static class ClearPolicy extends CtlCommand {
        @Parameters(index = "0", paramLabel = "name")
        String name;

        abstract boolean operator();

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Clearing " + (operator() ? "operator policy" : "policy") + " \"" + name + "\" on vhost \""
                + ctl.vhost + "\" ...");
            api.callOr404("DELETE", path(operator(), ctl.vhost) + "/" + ApiClient.segment(name), null,
                new CtlException(ExitCodes.UNAVAILABLE, "\nParameter does not exist"));
            return ExitCodes.OK;
        }
    }

    @Command(name = "clear_policy", mixinStandardHelpOptions = true, description = "Clears a policy.")
    static final class ClearUserPolicy extends ClearPolicy {
        @Override
        boolean operator() {
            return false;
        }
    }

    @Command(name = "clear_operator_policy", mixinStandardHelpOptions = true,
        description = "Clears an operator policy.")
    static final class ClearOperatorPolicy extends ClearPolicy {
        @Override
        boolean operator() {
            return true;
        }
    }

    abstract static class ListPolicies extends Listing {
        abstract boolean operator();

        @Override
        List<String> defaults() {
            return List.of("vhost", "name", "pattern", "apply-to", "definition", "priority");
        }

        @Override
        String banner() {
            return "Listing " + (operator() ? "operator policy overrides" : "policies") + " for vhost \"" + ctl.vhost
                + "\" ...";
        }

        /** The definition as rabbitmqctl shows it, as a JSON string (in a table and in {@code --formatter json}). */
        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list(path(operator(), ctl.vhost), VhostCommands.noSuchVhost(ctl.vhost)),
                (item, row) -> row.put("definition", ApiClient.JSON.writeValueAsString(item.get("definition"))));
        }
    }

    @Command(name = "list_policies", mixinStandardHelpOptions = true,
        description = "Lists the policies of a virtual host, the lowest priority first.")
    static final class ListUserPolicies extends ListPolicies {
        @Override
        boolean operator() {
            return false;
        }
    }

    @Command(name = "list_operator_policies", mixinStandardHelpOptions = true,
        description = "Lists the operator policies of a virtual host, the lowest priority first.")
    static final class ListOperatorPolicies extends ListPolicies {
        @Override
        boolean operator() {
            return true;
        }
    }
}
