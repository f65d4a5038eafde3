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
 * rabbitmqctl's {@code list_*} commands: the columns to show are arguments ({@code list_queues name messages
 * consumers}), rabbitmqctl's defaults when none are given; an unknown column is a usage error listing the supported
 * ones. Each column is the HTTP API's field of that name, except for bindings, whose rabbitmqctl names
 * ({@code source_name}, {@code destination_kind}, ...) are mapped to the API's. One instance per run.
 */
final class ListCommands {
    private ListCommands() {
    }

    /** What every listing does: check the columns, fetch the rows, print them. */
    abstract static class Listing implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Parameters(paramLabel = "column", arity = "0..*", description = "the columns to show")
        List<String> columns = new ArrayList<>();

        /** rabbitmqctl's default columns. */
        abstract List<String> defaults();

        /** Every column this listing has. */
        abstract List<String> supported();

        /** The informational line, as rabbitmqctl's. */
        abstract String banner();

        /** The rows, fetched from the HTTP API. */
        abstract List<Map<String, Object>> rows(ApiClient api);

        @Override
        public Integer call() {
            List<String> shown = columns.isEmpty() ? defaults() : columns;
            List<String> unknown = shown.stream().filter(c -> !supported().contains(c)).toList();
            if (!unknown.isEmpty()) {
                throw new CtlException(ExitCodes.USAGE, "Info key(s) " + String.join(",", unknown)
                    + " are not supported. Supported keys: " + String.join(", ", supported()));
            }
            ApiClient api = ctl.api();
            List<Map<String, Object>> rows = rows(api);
            ctl.info(banner());
            Table.print(ctl, shown, rows);
            return ExitCodes.OK;
        }
    }

    /** A listing of one virtual host's objects ({@code -p}). */
    abstract static class VhostListing extends Listing {
        @Option(names = {"-p", "--vhost"}, defaultValue = "/", description = "the virtual host (default: /)")
        String vhost;
    }

    @Command(name = "list_queues", mixinStandardHelpOptions = true,
        description = "Lists a virtual host's queues (default columns: name messages).")
    static final class ListQueues extends VhostListing {
        @Override
        List<String> defaults() {
            return List.of("name", "messages");
        }

        @Override
        List<String> supported() {
            return List.of("name", "vhost", "type", "durable", "auto_delete", "exclusive", "arguments", "node",
                "state", "messages", "messages_ready", "messages_unacknowledged", "consumers");
        }

        @Override
        String banner() {
            return "Listing queues for vhost " + vhost + " ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/queues/" + ApiClient.segment(vhost));
        }
    }

    @Command(name = "list_exchanges", mixinStandardHelpOptions = true,
        description = "Lists a virtual host's exchanges (default columns: name type).")
    static final class ListExchanges extends VhostListing {
        @Override
        List<String> defaults() {
            return List.of("name", "type");
        }

        @Override
        List<String> supported() {
            return List.of("name", "vhost", "type", "durable", "auto_delete", "internal", "arguments");
        }

        @Override
        String banner() {
            return "Listing exchanges for vhost " + vhost + " ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/exchanges/" + ApiClient.segment(vhost));
        }
    }

    @Command(name = "list_bindings", mixinStandardHelpOptions = true, description = "Lists a virtual host's"
        + " bindings (default columns: source_name source_kind destination_name destination_kind routing_key"
        + " arguments).")
    static final class ListBindings extends VhostListing {
        @Override
        List<String> defaults() {
            return List.of("source_name", "source_kind", "destination_name", "destination_kind", "routing_key",
                "arguments");
        }

        @Override
        List<String> supported() {
            return List.of("source_name", "source_kind", "destination_name", "destination_kind", "routing_key",
                "arguments", "vhost", "properties_key");
        }

        @Override
        String banner() {
            return "Listing bindings for vhost " + vhost + "...";
        }

        /** The API's {@code source}, {@code destination}, {@code destination_type} under rabbitmqctl's names. */
        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Map<String, Object> binding : api.list("/api/bindings/" + ApiClient.segment(vhost))) {
                Map<String, Object> row = new LinkedHashMap<>(binding);
                row.put("source_name", binding.get("source"));
                row.put("source_kind", "exchange");
                row.put("destination_name", binding.get("destination"));
                row.put("destination_kind", binding.get("destination_type"));
                rows.add(row);
            }
            return rows;
        }
    }

    @Command(name = "list_connections", mixinStandardHelpOptions = true,
        description = "Lists the connections (default columns: user peer_host peer_port state).")
    static final class ListConnections extends Listing {
        @Override
        List<String> defaults() {
            return List.of("user", "peer_host", "peer_port", "state");
        }

        @Override
        List<String> supported() {
            return List.of("name", "user", "vhost", "protocol", "state", "type", "node", "host", "port",
                "peer_host", "peer_port", "channels", "recv_oct", "send_oct");
        }

        @Override
        String banner() {
            return "Listing connections ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/connections");
        }
    }
}
