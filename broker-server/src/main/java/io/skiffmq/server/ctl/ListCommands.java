package io.skiffmq.server.ctl;

import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * rabbitmqctl's listings of a virtual host's objects and of the node's connections, channels and consumers: each
 * column is the HTTP API's field of that name, except where rabbitmqctl names it otherwise (bindings'
 * {@code source_name}, channels' {@code pid}, ...), which the rows add. A {@code pid} is the connection's or
 * channel's name, the handle {@code close_connection} takes (rabbitmqctl prints an Erlang pid, which its
 * {@code close_connection} takes). One instance per run.
 */
final class ListCommands {
    private ListCommands() {
    }

    @Command(name = "list_queues", mixinStandardHelpOptions = true,
        description = "Lists a virtual host's queues (default columns: name messages).")
    static final class ListQueues extends Listing.WithColumns {
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
            return "Listing queues for vhost " + ctl.vhost + " ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/queues/" + ApiClient.segment(ctl.vhost));
        }
    }

    @Command(name = "list_exchanges", mixinStandardHelpOptions = true,
        description = "Lists a virtual host's exchanges (default columns: name type).")
    static final class ListExchanges extends Listing.WithColumns {
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
            return "Listing exchanges for vhost " + ctl.vhost + " ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return api.list("/api/exchanges/" + ApiClient.segment(ctl.vhost));
        }
    }

    @Command(name = "list_bindings", mixinStandardHelpOptions = true, description = "Lists a virtual host's"
        + " bindings (default columns: source_name source_kind destination_name destination_kind routing_key"
        + " arguments).")
    static final class ListBindings extends Listing.WithColumns {
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
            return "Listing bindings for vhost " + ctl.vhost + "...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/bindings/" + ApiClient.segment(ctl.vhost)), (binding, row) -> {
                row.put("source_name", binding.get("source"));
                row.put("source_kind", "exchange");
                row.put("destination_name", binding.get("destination"));
                row.put("destination_kind", binding.get("destination_type"));
            });
        }
    }

    @Command(name = "list_connections", mixinStandardHelpOptions = true,
        description = "Lists the connections (default columns: user peer_host peer_port state).")
    static final class ListConnections extends Listing.WithColumns {
        @Override
        List<String> defaults() {
            return List.of("user", "peer_host", "peer_port", "state");
        }

        @Override
        List<String> supported() {
            return List.of("pid", "name", "user", "vhost", "protocol", "state", "type", "node", "host", "port",
                "peer_host", "peer_port", "channels", "recv_oct", "send_oct", "client_properties",
                "user_provided_name", "container_id", "auth_mechanism", "ssl", "ssl_protocol", "ssl_cipher",
                "peer_cert_subject", "peer_cert_issuer", "peer_cert_validity", "frame_max", "channel_max", "timeout",
                "connected_at");
        }

        @Override
        String banner() {
            return "Listing connections ...";
        }

        /** {@code client_properties} in a table as rabbitmqctl prints a field table; as the API's object in JSON. */
        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/connections"), (connection, row) -> {
                row.put("pid", connection.get("name"));
                if (!ctl.json()) {
                    row.put("client_properties", ErlangTerms.of(connection.getOrDefault("client_properties",
                        Map.of())));
                }
            });
        }
    }

    @Command(name = "list_channels", mixinStandardHelpOptions = true,
        description = "Lists the channels (default columns: pid user consumer_count messages_unacknowledged).")
    static final class ListChannels extends Listing.WithColumns {
        @Override
        List<String> defaults() {
            return List.of("pid", "user", "consumer_count", "messages_unacknowledged");
        }

        @Override
        List<String> supported() {
            return List.of("pid", "connection", "name", "number", "user", "vhost", "transactional", "confirm",
                "consumer_count", "messages_unacknowledged", "prefetch_count");
        }

        @Override
        String banner() {
            return "Listing channels ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            return renamed(api.list("/api/channels"), (channel, row) -> {
                row.put("pid", channel.get("name"));
                row.put("connection", nested(channel, "connection_details", "name"));
            });
        }
    }

    @Command(name = "list_consumers", mixinStandardHelpOptions = true, description = "Lists a virtual host's"
        + " consumers (default columns: queue_name channel_pid consumer_tag ack_required prefetch_count active"
        + " arguments).")
    static final class ListConsumers extends Listing.WithColumns {
        @Override
        List<String> defaults() {
            return List.of("queue_name", "channel_pid", "consumer_tag", "ack_required", "prefetch_count", "active",
                "arguments");
        }

        @Override
        List<String> supported() {
            return List.of("queue_name", "channel_pid", "consumer_tag", "ack_required", "prefetch_count", "active",
                "activity_status", "arguments");
        }

        @Override
        String banner() {
            return "Listing consumers in vhost " + ctl.vhost + " ...";
        }

        @Override
        List<Map<String, Object>> rows(ApiClient api) {
            // the stream protocol's subscriptions (no channel) are the HTTP API's only: rabbit_amqqueue:consumers/1
            // lists none for a stream
            List<Map<String, Object>> consumers = api.list("/api/consumers/" + ApiClient.segment(ctl.vhost)).stream()
                .filter(consumer -> !Map.of().equals(consumer.get("channel_details"))).toList();
            return renamed(consumers, (consumer, row) -> {
                row.put("queue_name", nested(consumer, "queue", "name"));
                row.put("channel_pid", nested(consumer, "channel_details", "name"));
            });
        }
    }
}
