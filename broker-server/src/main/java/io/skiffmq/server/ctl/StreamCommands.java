package io.skiffmq.server.ctl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rabbitmq-streams}' observability commands ({@code rabbitmq_stream}'s {@code ListStream*Command}s and
 * {@code rabbitmq_cli}'s {@code StreamStatusCommand}): their columns, defaults, banners and pretty tables
 * ({@link Table#printPretty}), from the HTTP API's {@code /api/stream/*} endpoints. A {@code connection_pid} is the
 * connection's name. One instance per run.
 */
final class StreamCommands {
    private StreamCommands() {
    }

    /** A listing printed as {@code rabbitmq-streams} prints one: the banner, then a pretty table. */
    abstract static class PrettyListing extends Listing.WithColumns {
        @Override
        public Integer call() {
            List<String> shown = shown();
            List<Map<String, Object>> rows = rows(ctl.api());
            ctl.info(banner());
            Table.printPretty(ctl, shown, rows);
            return ExitCodes.OK;
        }
    }

    @Command(name = "list_stream_connections", mixinStandardHelpOptions = true,
        description = "Lists stream connections (default columns: node conn_name).")
    static final class ListConnections extends PrettyListing {
        @Override
        List<String> defaults() {
            return List.of("node", "conn_name");
        }

        /** {@code ?INFO_ITEMS} of {@code rabbit_stream.hrl}. */
        @Override
        List<String> supported() {
            return List.of("conn_name", "pid", "node", "port", "peer_port", "host", "peer_cert_issuer",
                "peer_cert_subject", "peer_cert_serial_number", "peer_cert_validity", "peer_host", "user", "vhost",
                "subscriptions", "ssl", "ssl_cipher", "ssl_hash", "ssl_key_exchange", "ssl_protocol",
                "connection_state", "auth_mechanism", "heartbeat", "frame_max", "client_properties",
                "connected_at");
        }

        @Override
        String banner() {
            return "Listing stream connections ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/stream/connections"), (connection, row) -> {
                row.put("conn_name", connection.get("name"));
                row.put("pid", connection.get("name"));
                row.put("heartbeat", connection.get("timeout"));
                if (!ctl.json()) {
                    row.put("client_properties", ErlangTerms.of(connection.getOrDefault("client_properties",
                        Map.of())));
                }
            });
        }
    }

    @Command(name = "list_stream_consumers", mixinStandardHelpOptions = true,
        description = "Lists all stream consumers for a vhost (default columns: subscription_id stream"
            + " messages_consumed offset offset_lag credits active activity_status properties).")
    static final class ListConsumers extends PrettyListing {
        @Override
        List<String> defaults() {
            return List.of("subscription_id", "stream", "messages_consumed", "offset", "offset_lag", "credits",
                "active", "activity_status", "properties");
        }

        /** {@code ?CONSUMER_INFO_ITEMS}. */
        @Override
        List<String> supported() {
            return List.of("connection_pid", "node", "subscription_id", "stream", "messages_consumed", "offset",
                "offset_lag", "credits", "active", "activity_status", "properties");
        }

        @Override
        String banner() {
            return "Listing stream consumers ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/stream/consumers/" + ApiClient.segment(ctl.vhost)), (consumer, row) -> {
                entity(consumer, row);
                row.put("messages_consumed", consumer.get("consumed"));
            });
        }
    }

    @Command(name = "list_stream_publishers", mixinStandardHelpOptions = true,
        description = "Lists all stream publishers for a vhost (default columns: publisher_id stream reference"
            + " messages_published messages_confirmed messages_errored).")
    static final class ListPublishers extends PrettyListing {
        @Override
        List<String> defaults() {
            return List.of("publisher_id", "stream", "reference", "messages_published", "messages_confirmed",
                "messages_errored");
        }

        /** {@code ?PUBLISHER_INFO_ITEMS}. */
        @Override
        List<String> supported() {
            return List.of("connection_pid", "node", "publisher_id", "stream", "reference", "messages_published",
                "messages_confirmed", "messages_errored");
        }

        @Override
        String banner() {
            return "Listing stream publishers ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/stream/publishers/" + ApiClient.segment(ctl.vhost)), (publisher, row) -> {
                entity(publisher, row);
                row.put("messages_published", publisher.get("published"));
                row.put("messages_confirmed", publisher.get("confirmed"));
                row.put("messages_errored", publisher.get("errored"));
            });
        }
    }

    /** The columns a publisher and a consumer share: where they are. */
    private static void entity(Map<String, Object> item, Map<String, Object> row) {
        row.put("connection_pid", nested(item, "connection_details", "name"));
        row.put("node", nested(item, "connection_details", "node"));
        row.put("stream", nested(item, "queue", "name"));
    }

    private static Object nested(Map<String, Object> item, String object, String field) {
        return Listing.nested(item, object, field);
    }

    @Command(name = "list_stream_group_consumers", mixinStandardHelpOptions = true,
        description = "Lists consumers of a stream consumer group in a vhost (default columns: subscription_id"
            + " connection_name state).")
    static final class ListGroupConsumers extends PrettyListing {
        @Option(names = "--stream", paramLabel = "stream", description = "the stream")
        String stream;

        @Option(names = "--reference", paramLabel = "reference", description = "the group's name (its consumers'"
            + " name)")
        String reference;

        @Override
        List<String> defaults() {
            return List.of("subscription_id", "connection_name", "state");
        }

        /** {@code ?GROUP_CONSUMER_INFO_ITEMS}. */
        @Override
        List<String> supported() {
            return List.of("subscription_id", "connection_name", "state");
        }

        @Override
        String banner() {
            return "Listing group consumers ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            if (stream == null || reference == null) {
                throw new CtlException(ExitCodes.USAGE, "not enough arguments: --stream and --reference are"
                    + " required");
            }
            return api.list("/api/stream/groups/" + ApiClient.segment(ctl.vhost) + "/" + ApiClient.segment(stream)
                + "/" + ApiClient.segment(reference), new CtlException(ExitCodes.SOFTWARE,
                    "The group does not exist"));
        }
    }

    @Command(name = "stream_status", mixinStandardHelpOptions = true,
        description = "Displays the status of a stream (columns: role node epoch offset committed_offset"
            + " committed_chunk_id first_offset readers segments).")
    static final class Status extends CtlCommand {
        private static final List<String> COLUMNS = List.of("role", "node", "epoch", "offset", "committed_offset",
            "committed_chunk_id", "first_offset", "readers", "segments");
        private static final List<String> TRACKING_COLUMNS = List.of("type", "reference", "value");

        @Parameters(index = "0", paramLabel = "stream", description = "name of the stream")
        String name;

        @Option(names = "--tracking", description = "the stream's tracking instead (columns: type reference value):"
            + " stored offsets, and producers' highest publishing ids as {chunk id, id}")
        boolean tracking;

        @Override
        public Integer call() {
            String path = "/api/stream/" + (tracking ? "tracking/" : "status/") + ApiClient.segment(ctl.vhost) + "/"
                + ApiClient.segment(name);
            ApiClient.Answer answer = ctl.api().send("GET", path, null, Map.of());
            if (answer.status() == 404) {
                throw new CtlException(ExitCodes.SOFTWARE, "{:error, :not_found}");
            }
            if (answer.status() == 400) {
                throw new CtlException(ExitCodes.SOFTWARE, answer.reason());
            }
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rows = new ArrayList<>((List<Map<String, Object>>) ApiClient.ok("GET", path,
                answer));
            if (tracking) {
                // rabbit_stream_queue:tracking_status/2 shows a sequence as osiris keeps it: {chunk id, id}
                List<Map<String, Object>> shown = new ArrayList<>();
                for (Map<String, Object> row : rows) {
                    Map<String, Object> line = new java.util.LinkedHashMap<>(row);
                    if ("sequence".equals(row.get("type"))) {
                        line.put("value", "{" + row.get("chunk_id") + ", " + row.get("value") + "}");
                    }
                    shown.add(line);
                }
                ctl.info("Status of stream " + name + " on node "
                    + ((Map<?, ?>) ctl.api().get("/api/overview")).get("node") + " ...");
                Table.printPretty(ctl, TRACKING_COLUMNS, shown);
                return ExitCodes.OK;
            }
            ctl.info("Status of stream " + name + " on node " + rows.get(0).get("node") + " ...");
            Table.printPretty(ctl, COLUMNS, rows);
            return ExitCodes.OK;
        }
    }
}
