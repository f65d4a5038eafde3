package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The cluster: rabbitmqctl's {@code cluster_status} (from {@code /api/cluster-status}, in rabbitmqctl's sections),
 * {@code set_cluster_name}, {@code join_cluster}, {@code forget_cluster_node} and {@code await_online_nodes}.
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

    @Command(name = "join_cluster", mixinStandardHelpOptions = true, description = "Makes the node join the cluster"
        + " of NODE (name@host or name@host:cluster-port), without a stop or reset first; the node's own metadata"
        + " is replaced by the cluster's.")
    static final class Join extends CtlCommand {
        @Parameters(index = "0", paramLabel = "NODE")
        String seed;

        @Override
        public Integer call() {
            ctl.info("Clustering node with " + seed + " ...");
            ApiClient.ok("POST", "/api/cluster/join", ctl.api().send("POST", "/api/cluster/join",
                Map.of("node", seed), Map.of()));
            return ExitCodes.OK;
        }
    }

    @Command(name = "forget_cluster_node", mixinStandardHelpOptions = true,
        description = "Removes NODE from the cluster (run on another member; needs a majority).")
    static final class Forget extends CtlCommand {
        @Parameters(index = "0", paramLabel = "NODE")
        String node;

        @Override
        public Integer call() {
            ctl.info("Removing node " + node + " from the cluster");
            String path = "/api/cluster/nodes/" + ApiClient.segment(node);
            ApiClient.ok("DELETE", path, ctl.api().send("DELETE", path, null, Map.of()));
            return ExitCodes.OK;
        }
    }

    @Command(name = "await_online_nodes", mixinStandardHelpOptions = true, description = "Waits until COUNT nodes"
        + " of the cluster are running: exit 0; 75 when the timeout runs out first.")
    static final class AwaitOnline extends CtlCommand {
        /** Between two looks: each look asks every member, for up to two seconds. */
        private static final long RETRY_MILLIS = 500;

        @Parameters(index = "0", paramLabel = "COUNT")
        int count;

        @picocli.CommandLine.Option(names = {"-t", "--timeout"}, defaultValue = "300", paramLabel = "SECONDS",
            description = "how long to wait (default: ${DEFAULT-VALUE} s)")
        long timeoutSeconds;

        @Override
        @SuppressWarnings("unchecked")
        public Integer call() throws InterruptedException {
            ctl.info("Will wait for at least " + count + " nodes to join the cluster. Timeout: " + timeoutSeconds
                + " seconds");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(timeoutSeconds);
            ApiClient api = ctl.api();
            while (true) {
                Object running;
                try {
                    ApiClient.Answer answer = api.send("GET", "/api/cluster-status", null, Map.of());
                    if (answer.status() == 503) {
                        // a node that has not got the cluster's users yet (its first start): wait for them too
                        running = answer.reason();
                    } else {
                        running = ((Map<String, Object>) ApiClient.ok("GET", "/api/cluster-status", answer))
                            .get("running_nodes");
                        if (((List<Object>) running).size() >= count) {
                            return ExitCodes.OK;
                        }
                    }
                } catch (CtlException unreachable) {
                    if (unreachable.exitCode() != ExitCodes.UNAVAILABLE) {
                        throw unreachable;
                    }
                    // the node is not listening yet: wait for it, as await_startup does
                    running = unreachable.getMessage();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new CtlException(ExitCodes.TEMPFAIL, "fewer than " + count + " nodes are running after "
                        + timeoutSeconds + " seconds; last: " + running);
                }
                // polling, as rabbitmqctl's await_online_nodes does
                java.util.concurrent.TimeUnit.NANOSECONDS.sleep(Math.min(left,
                    java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)));
            }
        }
    }
}
