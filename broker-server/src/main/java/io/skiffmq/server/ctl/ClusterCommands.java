package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The cluster: rabbitmqctl's {@code cluster_status} (from {@code /api/cluster-status}, in rabbitmqctl's sections)
 * and {@code set_cluster_name}.
 */
final class ClusterCommands {
    private ClusterCommands() {
    }

    @Command(name = "cluster_status", mixinStandardHelpOptions = true,
        description = "Shows the cluster's name, its disk nodes, the nodes running now, and alarms.")
    static final class Status extends CtlCommand {
        @Override
        @SuppressWarnings("unchecked")
        public Integer call() {
            Map<String, Object> status = (Map<String, Object>) ctl.api().get("/api/cluster-status");
            if (ctl.json()) {
                ctl.out().println(ApiClient.JSON.writeValueAsString(status));
                return ExitCodes.OK;
            }
            ctl.info("Cluster status of node " + status.get("node") + " ...");
            print(ctl.out(), status);
            return ExitCodes.OK;
        }

        @SuppressWarnings("unchecked")
        private static void print(PrintWriter out, Map<String, Object> status) {
            out.println("Basics");
            out.println();
            out.println("Cluster name: " + status.get("cluster_name"));
            out.println();
            section(out, "Disk Nodes", (List<Object>) status.get("disk_nodes"));
            section(out, "Running Nodes", (List<Object>) status.get("running_nodes"));
            out.println("Alarms");
            out.println();
            List<Map<String, Object>> alarms = (List<Map<String, Object>>) status.get("alarms");
            if (alarms.isEmpty()) {
                out.println("(none)");
            }
            for (Map<String, Object> alarm : alarms) {
                out.println(("memory".equals(alarm.get("alarm")) ? "Memory alarm on node " : "Free disk space alarm"
                    + " on node ") + alarm.get("node"));
            }
            out.println();
            // a minority cannot change metadata, but no partition is detected as such yet
            out.println("Network Partitions");
            out.println();
            out.println("(none)");
        }

        private static void section(PrintWriter out, String title, List<Object> nodes) {
            out.println(title);
            out.println();
            nodes.forEach(out::println);
            out.println();
        }
    }

    @Command(name = "set_cluster_name", mixinStandardHelpOptions = true,
        description = "Names the cluster, on every node (needs a majority of the nodes).")
    static final class SetName extends CtlCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            ctl.info("Setting cluster name to " + name + " ...");
            ApiClient api = ctl.api();
            ApiClient.ok("PUT", "/api/cluster-name", api.send("PUT", "/api/cluster-name", Map.of("name", name),
                Map.of()));
            return ExitCodes.OK;
        }
    }
}
