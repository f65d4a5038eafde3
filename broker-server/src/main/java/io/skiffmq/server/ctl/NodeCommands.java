package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The node as a whole: rabbitmqctl's {@code status} (from {@code /api/overview} and {@code /api/nodes/{node}}) and
 * {@code await_startup} (on the virtual-hosts health check). A stopping node shows as such in both: {@code status}
 * prints "State: stopping", and {@code await_startup} fails at once with {@link ExitCodes#UNAVAILABLE}. Also
 * {@code stop_app} and {@code start_app} ({@code POST /api/app/stop}, {@code /start}), and {@code eval}, refused but
 * for raising and clearing a resource alarm.
 */
final class NodeCommands {
    /** The health check's reason on a stopping node (the HTTP API's {@code HealthChecks}). */
    static final String STOPPING = "node is stopping";

    private NodeCommands() {
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
        description = "Shows the node's state, versions, alarms, memory, disk and listeners.")
    static final class Status extends CtlCommand {
        @Override
        @SuppressWarnings("unchecked")
        public Integer call() {
            ApiClient api = ctl.api();
            Map<String, Object> overview = (Map<String, Object>) api.get("/api/overview");
            String node = String.valueOf(overview.get("node"));
            Map<String, Object> details = (Map<String, Object>) api.get("/api/nodes/" + ApiClient.segment(node));
            if (ctl.json()) {
                Map<String, Object> both = new LinkedHashMap<>(details);
                both.put("overview", overview);
                ctl.out().println(ApiClient.JSON.writeValueAsString(both));
                return ExitCodes.OK;
            }
            ctl.info("Status of node " + node + " ...");
            print(ctl.out(), overview, details);
            return ExitCodes.OK;
        }

        private static void print(PrintWriter out, Map<String, Object> overview, Map<String, Object> node) {
            boolean running = !Boolean.FALSE.equals(node.get("running"));
            out.println("Runtime");
            out.println();
            out.println("OS PID: " + node.get("os_pid"));
            out.println("Uptime (seconds): " + number(node.get("uptime")) / 1000);
            out.println("State: " + (running ? "running" : "stopping"));
            out.println("Product name: " + overview.get("product_name"));
            out.println("Product version: " + overview.get("product_version"));
            out.println("RabbitMQ version: " + overview.get("rabbitmq_version"));
            out.println();
            out.println("Alarms");
            out.println();
            boolean memory = Boolean.TRUE.equals(node.get("mem_alarm"));
            boolean disk = Boolean.TRUE.equals(node.get("disk_free_alarm"));
            if (!memory && !disk) {
                out.println("(none)");
            }
            if (memory) {
                out.println("Memory alarm on node " + node.get("name"));
            }
            if (disk) {
                out.println("Free disk space alarm on node " + node.get("name"));
            }
            out.println();
            out.println("Memory");
            out.println();
            out.println("Total memory used: " + gigabytes(node.get("mem_used")) + " gb");
            out.println("Memory high watermark: " + gigabytes(node.get("mem_limit")) + " gb");
            out.println();
            out.println("Free Disk Space");
            out.println();
            out.println("Low free disk space watermark: " + gigabytes(node.get("disk_free_limit")) + " gb");
            out.println("Free disk space: " + gigabytes(node.get("disk_free")) + " gb");
            out.println();
            out.println("Listeners");
            out.println();
            Object listeners = overview.get("listeners");
            if (listeners instanceof List<?> list && !list.isEmpty()) {
                for (Object l : list) {
                    Map<?, ?> listener = (Map<?, ?>) l;
                    out.println("Interface: " + listener.get("ip_address") + ", port: " + listener.get("port")
                        + ", protocol: " + listener.get("protocol"));
                }
            } else {
                out.println("(none)");
            }
        }

        private static long number(Object value) {
            return value instanceof Number n ? n.longValue() : 0;
        }

        private static String gigabytes(Object bytes) {
            return String.format(java.util.Locale.ROOT, "%.4f", number(bytes) / 1e9);
        }
    }

    @Command(name = "await_startup", mixinStandardHelpOptions = true, description = "Waits until the node has"
        + " started (its virtual-hosts health check passes): exit 0; 75 when the timeout runs out first; 69 at once"
        + " when the node is stopping.")
    static final class AwaitStartup extends CtlCommand {
        /** Between two tries: a starting node recovers its journal before its HTTP API binds. */
        private static final long RETRY_MILLIS = 200;

        @Option(names = {"-t", "--timeout"}, defaultValue = "300", paramLabel = "SECONDS",
            description = "how long to wait (default: ${DEFAULT-VALUE} s)")
        long timeoutSeconds;

        @Override
        public Integer call() throws InterruptedException {
            ApiClient api = ctl.api();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            String last = "";
            while (true) {
                ApiClient.Answer answer;
                try {
                    answer = api.send("GET", "/api/health/checks/virtual-hosts", null, Map.of());
                } catch (CtlException unreachable) {
                    // not listening yet (or the network is slow): try again until the deadline
                    answer = null;
                    last = unreachable.getMessage();
                }
                if (answer != null) {
                    if (answer.status() == 200) {
                        return ExitCodes.OK;
                    }
                    if (STOPPING.equals(answer.reason())) {
                        throw new CtlException(ExitCodes.UNAVAILABLE, "the node at " + api.base() + " is stopping");
                    }
                    if (answer.status() != 503) {
                        // 401 and the like: waiting will not change them
                        throw new CtlException(ExitCodes.SOFTWARE, "the HTTP API at " + api.base() + " answered HTTP "
                            + answer.status() + ": " + answer.reason());
                    }
                    last = "HTTP 503: " + answer.reason();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new CtlException(ExitCodes.TEMPFAIL, "the node did not start within " + timeoutSeconds
                        + " seconds; last: " + last);
                }
                // polling, as rabbitmqctl's await_startup does: there is nothing to wait on across the network
                TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)));
            }
        }
    }

    /** stop_app and start_app: rabbitmqctl's informational line, then the HTTP API's {@code POST /api/app/...}. */
    abstract static class ApplicationCommand extends CtlCommand {
        /** The informational line for {@code node}. */
        abstract String banner(String node);

        /** {@code stop} or {@code start}. */
        abstract String action();

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info(banner(String.valueOf(((Map<?, ?>) api.get("/api/overview")).get("node"))));
            api.call("POST", "/api/app/" + action(), null, Map.of());
            return ExitCodes.OK;
        }
    }

    @Command(name = "stop_app", mixinStandardHelpOptions = true, description = "Stops the broker's application:"
        + " closes the AMQP and stream listeners and every client connection (as forced); the node, its queues"
        + " and the HTTP API stay up.")
    static final class StopApp extends ApplicationCommand {
        @Override
        String banner(String node) {
            return "Stopping rabbit application on node " + node + " ...";
        }

        @Override
        String action() {
            return "stop";
        }
    }

    @Command(name = "start_app", mixinStandardHelpOptions = true, description = "Starts the broker's application"
        + " again after stop_app: binds the listeners on the ports they had.")
    static final class StartApp extends ApplicationCommand {
        @Override
        String banner(String node) {
            return "Starting node " + node + " ...";
        }

        @Override
        String action() {
            return "start";
        }
    }

    /**
     * rabbitmqctl's {@code eval} runs an Erlang expression on the node; SkiffMQ is no Erlang node. It carries out
     * the two expressions RabbitMQ's client test suites evaluate to raise and clear resource alarms
     * ({@code rabbit_alarm:set_alarm({{resource_limit, memory|disk, node()}, []}).} and
     * {@code rabbit_alarm:clear_alarm({resource_limit, memory|disk, node()}).}, on {@code PUT} and {@code DELETE
     * /api/app/alarms/...}); every other expression fails as one that does not evaluate does in rabbitmqctl (65),
     * saying why.
     */
    @Command(name = "eval", mixinStandardHelpOptions = true, description = "Evaluates Erlang expressions in"
        + " rabbitmqctl; SkiffMQ runs no Erlang, and takes only rabbit_alarm:set_alarm and clear_alarm of a resource"
        + " limit alarm.")
    static final class Eval extends CtlCommand {
        private static final Pattern ALARM = Pattern.compile(
            "rabbit_alarm:(?:set_alarm\\(\\{\\{resource_limit,(memory|disk),node\\(\\)\\},\\[\\]\\}\\)"
                + "|clear_alarm\\(\\{resource_limit,(memory|disk),node\\(\\)\\}\\))\\.?");

        @picocli.CommandLine.Parameters(paramLabel = "EXPRESSION", arity = "0..*")
        List<String> expression = List.of();

        @Override
        public Integer call() {
            if (!expression.isEmpty() && expression.get(0).isBlank()) {
                throw new CtlException(ExitCodes.USAGE, "Expression must not be blank");
            }
            Matcher alarm = ALARM.matcher(String.join(" ", expression).replaceAll("\\s+", ""));
            if (alarm.matches()) {
                boolean set = alarm.group(1) != null;
                ctl.api().call(set ? "PUT" : "DELETE", "/api/app/alarms/" + (set ? alarm.group(1) : alarm.group(2)),
                    null, Map.of());
                ctl.out().println("ok");
                return ExitCodes.OK;
            }
            throw new CtlException(ExitCodes.DATA_ERROR, "Evaluation failed: skiffmqctl cannot evaluate Erlang"
                + " expressions (SkiffMQ is not an Erlang node); see docs/cli.md for the commands it has");
        }
    }
}
