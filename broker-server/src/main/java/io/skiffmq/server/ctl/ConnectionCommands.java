package io.skiffmq.server.ctl;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code close_connection}, by the connection's name (as {@code list_connections name} or {@code pid}
 * shows it), and {@code close_all_connections}: {@code DELETE /api/connections/{name}} with the reason in
 * {@code X-Reason}. One instance per run.
 */
final class ConnectionCommands {
    private ConnectionCommands() {
    }

    /** Closes one connection, telling its client {@code reason}; one that is gone is an error unless {@code goneOk}. */
    private static void close(ApiClient api, String name, String reason, boolean goneOk) {
        String path = "/api/connections/" + ApiClient.segment(name);
        ApiClient.Answer answer = api.send("DELETE", path, null, Map.of("X-Reason", reason));
        if (!(goneOk && answer.status() == 404)) {
            ApiClient.ok("DELETE", path, answer);
        }
    }

    @Command(name = "close_connection", mixinStandardHelpOptions = true, description = "Closes a connection:"
        + " 0-9-1 with 320 CONNECTION_FORCED, AMQP 1.0 with amqp:connection:forced, and the reason.")
    static final class CloseConnection extends CtlCommand {
        @Parameters(index = "0", paramLabel = "name", description = "the connection's name (list_connections name)")
        String name;

        @Parameters(index = "1", paramLabel = "reason", description = "what the client is told")
        String reason;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Closing connection " + name + ", reason: " + reason + "...");
            close(api, name, reason, false);
            return ExitCodes.OK;
        }
    }

    @Command(name = "close_all_connections", mixinStandardHelpOptions = true, description = "Closes every"
        + " connection of a virtual host (-p), or of the node (--global), telling clients the explanation.")
    static final class CloseAllConnections extends CtlCommand {
        @Parameters(index = "0", paramLabel = "explanation", description = "what the clients are told")
        String explanation;

        @Option(names = "--global", description = "the connections of every virtual host")
        boolean global;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "0",
            description = "close up to this many (0: all; not with --global)")
        int limit;

        @Option(names = "--per-connection-delay", paramLabel = "MILLISECONDS", defaultValue = "0",
            description = "wait between two closes")
        long delayMillis;

        @Override
        public Integer call() throws InterruptedException {
            ApiClient api = ctl.api();
            List<Map<String, Object>> connections;
            if (global) {
                String node = String.valueOf(((Map<?, ?>) api.get("/api/overview")).get("node"));
                ctl.info("Closing all connections to node " + node + " (across all vhosts), reason: " + explanation
                    + "...");
                connections = api.list("/api/connections");
            } else {
                ctl.info((limit == 0 ? "Closing all connections" : "Closing " + limit + " connections")
                    + " in vhost " + ctl.vhost + ", reason: " + explanation + "...");
                connections = api.list(VhostCommands.path(ctl.vhost) + "/connections");
                if (limit > 0 && connections.size() > limit) {
                    connections = connections.subList(0, limit);
                }
            }
            for (int i = 0; i < connections.size(); i++) {
                if (i > 0 && delayMillis > 0) {
                    TimeUnit.MILLISECONDS.sleep(delayMillis); // the operator's pacing, as rabbitmqctl's
                }
                close(api, String.valueOf(connections.get(i).get("name")), explanation, true); // gone: no error
            }
            if (!ctl.json()) {
                ctl.out().println("Closed " + connections.size() + " connections");
            }
            return ExitCodes.OK;
        }
    }
}
