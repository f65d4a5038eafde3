package io.skiffmq.server.ctl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code delete_queue} and {@code purge_queue}, and rabbitmq-queues' {@code quorum_status},
 * {@code add_member}, {@code delete_member}, {@code grow}, {@code shrink} and {@code rebalance} ({@code -p} names the
 * virtual host), through the HTTP API, with rabbitmqctl's texts and exit codes. One instance per run.
 */
final class QueueCommands {
    private QueueCommands() {
    }

    /** A command on one queue of the {@code -p} virtual host. */
    abstract static class OnQueue extends CtlCommand {
        @Parameters(index = "0", paramLabel = "queue_name")
        String queue;

        String path() {
            return "/api/queues/" + ApiClient.segment(ctl.vhost) + "/" + ApiClient.segment(queue);
        }
    }

    /**
     * {@code --if-unused} has no {@code -u}: that is skiffmqctl's {@code --username}. {@code --force} is accepted
     * and changes nothing: no queue is protected from deletion here.
     */
    @Command(name = "delete_queue", mixinStandardHelpOptions = true, description = "Deletes a queue and its"
        + " messages; prints how many were ready.")
    static final class DeleteQueue extends OnQueue {
        @Option(names = {"-e", "--if-empty"}, description = "only if it has no messages ready")
        boolean ifEmpty;

        @Option(names = "--if-unused", description = "only if it has no consumers")
        boolean ifUnused;

        @Option(names = "--force", description = "accepted, as rabbitmqctl's (no queue is protected here)")
        boolean force;

        @Override
        public Integer call() {
            if (queue.isEmpty()) {
                throw new CtlException(ExitCodes.DATA_ERROR, "queue name cannot be an empty string");
            }
            ApiClient api = ctl.api();
            ctl.info("Deleting queue '" + queue + "' on vhost '" + ctl.vhost + "' "
                + (ifEmpty ? "if queue is empty " : "") + (ifEmpty && ifUnused ? "and " : "")
                + (ifUnused ? "if queue is unused " : "") + "...");
            CtlException missing = new CtlException(ExitCodes.USAGE, "No such queue was found");
            if (!(api.callOr404("GET", path(), null, missing) instanceof Map<?, ?> found)) {
                throw new CtlException(ExitCodes.SOFTWARE, "GET " + path() + ": expected a JSON object");
            }
            Object ready = found.get("messages_ready");
            if (ifEmpty && ready instanceof Number n && n.longValue() > 0) {
                throw new CtlException(ExitCodes.USAGE, "The queue is not empty");
            }
            if (ifUnused && found.get("consumers") instanceof Number n && n.longValue() > 0) {
                throw new CtlException(ExitCodes.USAGE, "The queue is in use");
            }
            api.callOr404("DELETE", path() + "?if-empty=" + ifEmpty + "&if-unused=" + ifUnused, null, missing);
            if (!ctl.json()) {
                ctl.out().println("Queue was successfully deleted with " + ready + " ready messages");
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "purge_queue", mixinStandardHelpOptions = true, description = "Removes a queue's ready messages.")
    static final class PurgeQueue extends OnQueue {
        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Purging queue '" + queue + "' in vhost '" + ctl.vhost + "' ...");
            api.callOr404("DELETE", path() + "/contents", null, new CtlException(ExitCodes.DATA_ERROR,
                "Object (queue, stream, exchange, etc) was not found"));
            return ExitCodes.OK;
        }
    }

    /**
     * rabbitmq-queues' {@code quorum_status}: each member of a quorum queue, leader or follower, or {@code noproc}
     * when this node cannot reach it, from the HTTP API's {@code leader}, {@code members} and {@code online}. The
     * Raft indexes and term that RabbitMQ shows beside them are not shown (docs/quorum-queues.md).
     */
    @Command(name = "quorum_status", mixinStandardHelpOptions = true, description = "Shows the members of a quorum"
        + " queue: which leads, which follow.")
    static final class QuorumStatus extends OnQueue {
        private static final List<String> COLUMNS = List.of("Node Name", "Raft State", "Membership");

        @Override
        public Integer call() {
            CtlException missing = new CtlException(ExitCodes.DATA_ERROR, "Object (queue, stream, exchange, etc)"
                + " was not found");
            if (!(ctl.api().callOr404("GET", path(), null, missing) instanceof Map<?, ?> found)) {
                throw new CtlException(ExitCodes.SOFTWARE, "GET " + path() + ": expected a JSON object");
            }
            if (!"quorum".equals(found.get("type")) || !(found.get("members") instanceof List<?> members)) {
                throw new CtlException(ExitCodes.DATA_ERROR, "Error:\n{:error, :not_quorum_queue}");
            }
            List<?> online = found.get("online") instanceof List<?> l ? l : List.of();
            ctl.info("Status of quorum queue " + queue + " on node " + found.get("node") + " ...");
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Object member : members) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("Node Name", member);
                row.put("Raft State", member.equals(found.get("leader")) ? "leader"
                    : online.contains(member) ? "follower" : "noproc");
                row.put("Membership", "voter");
                rows.add(row);
            }
            Table.printPretty(ctl, COLUMNS, rows);
            return ExitCodes.OK;
        }
    }

    // ---- rabbitmq-queues' membership commands (docs/quorum-queues.md, "Changing members") --------------------

    /** The cluster's member names, for rabbitmq-queues' {@code existing_cluster_member} check. */
    static List<String> clusterMembers(ApiClient api) {
        return api.get("/api/cluster-status") instanceof Map<?, ?> status
            && status.get("disk_nodes") instanceof List<?> nodes ? nodes.stream().map(String::valueOf).toList()
            : List.of();
    }

    /** rabbitmq-queues' validation failure for a node that is not a member of the cluster. */
    static CtlException notAMember(String node) {
        return new CtlException(ExitCodes.USAGE, "{:not_a_cluster_member, :\"" + node + "\"}");
    }

    /**
     * One member change through the HTTP API; null when done, else rabbit_quorum_queue's reason (the API's 503).
     *
     * @throws CtlException when the queue does not exist, with rabbitmqctl's words
     */
    static String change(SkiffmqCtl ctl, String vhost, String queue, String node, boolean add) {
        String path = "/api/queues/quorum/" + ApiClient.segment(vhost) + "/" + ApiClient.segment(queue)
            + "/replicas/" + (add ? "add" : "delete");
        ApiClient.Answer answer = ctl.api().send(add ? "POST" : "DELETE", path, Map.of("node", node), Map.of());
        if (answer.status() == 404) {
            throw new CtlException(ExitCodes.DATA_ERROR, "queue '" + queue + "' was not found in virtual host '"
                + vhost + "'");
        }
        if (answer.status() == 503) {
            return answer.reason();
        }
        ApiClient.ok(add ? "POST" : "DELETE", path, answer);
        return null;
    }

    /** rabbitmq-queues' words and exit code for a member change's reason. */
    static CtlException failed(SkiffmqCtl ctl, String reason, String command, boolean add) {
        return switch (reason) {
            case "classic_queue_not_supported" -> new CtlException(ExitCodes.UNAVAILABLE, add
                ? "Cannot add members to a classic queue" : "Cannot delete members from a classic queue");
            case "timeout" -> new CtlException(ExitCodes.TEMPFAIL, "operation " + command + " on node "
                + ctl.api().base().getHost() + " timed out");
            default -> new CtlException(ExitCodes.UNAVAILABLE, reason);
        };
    }

    /** rabbitmq-queues' {@code --vhost-pattern} and {@code --queue-pattern}: which queues grow and rebalance take. */
    static final class Patterns {
        @Option(names = "--vhost-pattern", defaultValue = ".*", description = "regular expression to match virtual"
            + " host names")
        String vhostPattern;

        @Option(names = "--queue-pattern", defaultValue = ".*", description = "regular expression to match queue"
            + " names")
        String queuePattern;
    }

    /** rabbitmq-queues' check of {@code --membership}. */
    static void checkMembership(String membership) {
        if (!List.of("promotable", "non_voter", "voter").contains(membership)) {
            throw new CtlException(ExitCodes.USAGE, "voter status '" + membership + "' is not recognised.");
        }
    }

    /** A member to add or delete: the queue and the node. */
    abstract static class MemberChange extends OnQueue {
        @Parameters(index = "1", paramLabel = "node")
        String node;
    }

    @Command(name = "add_member", mixinStandardHelpOptions = true, description = "Adds a quorum queue member"
        + " (replica) on the given node.")
    static final class AddMember extends MemberChange {
        @Option(names = "--membership", defaultValue = "promotable", description = "promotable (default) or voter:"
            + " accepted; every member here is a voter")
        String membership;

        @Option(names = {"-t", "--timeout"}, description = "accepted, as rabbitmq-queues' (the node gives a change"
            + " 25 s)")
        Long timeout;

        @Override
        public Integer call() {
            checkMembership(membership);
            if (!clusterMembers(ctl.api()).contains(node)) {
                throw notAMember(node);
            }
            ctl.info("Adding a replica for queue " + queue + " on node " + node + "...");
            String reason = change(ctl, ctl.vhost, queue, node, true);
            if (reason != null) {
                throw failed(ctl, reason, "add_member", true);
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "delete_member", mixinStandardHelpOptions = true, description = "Removes a quorum queue member"
        + " (replica) on the given node.")
    static final class DeleteMember extends MemberChange {
        @Override
        public Integer call() {
            ctl.info("Removing a replica of queue " + queue + " on node " + node + "...");
            String reason = change(ctl, ctl.vhost, queue, node, false);
            if (reason != null) {
                throw failed(ctl, reason, "delete_member", false);
            }
            return ExitCodes.OK;
        }
    }

    /** grow and shrink: each quorum queue that matches, in turn, and a table of how each went. */
    abstract static class OnAllQueues extends CtlCommand {
        private static final List<String> COLUMNS = List.of("vhost", "name", "size", "result");

        @Option(names = "--errors-only", description = "only list queues which reported an error")
        boolean errorsOnly;

        /** Changes the member on {@code node} of each queue {@code chosen} picks. */
        int run(String node, boolean add, java.util.function.BiPredicate<Map<String, Object>, List<?>> chosen) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Map<String, Object> queue : ctl.api().list("/api/queues")) {
                if (!"quorum".equals(queue.get("type")) || !(queue.get("members") instanceof List<?> members)
                        || members.contains(node) == add || !chosen.test(queue, members)) {
                    continue;
                }
                String vhost = String.valueOf(queue.get("vhost"));
                String name = String.valueOf(queue.get("name"));
                String reason;
                try {
                    reason = change(ctl, vhost, name, node, add);
                } catch (CtlException e) {
                    reason = "not_found"; // deleted meanwhile
                }
                if (reason == null && errorsOnly) {
                    continue;
                }
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("vhost", vhost);
                row.put("name", name);
                row.put("size", reason == null ? members.size() + (add ? 1 : -1)
                    : reason.equals("timeout") ? "?" : members.size());
                row.put("result", reason == null ? "ok" : switch (reason) {
                    case "timeout" -> "error: the operation timed out and may not have been completed";
                    case "last_node" -> "error: the last node cannot be removed";
                    default -> "error: " + reason;
                });
                rows.add(row);
            }
            Table.print(ctl, COLUMNS, rows, true);
            return ExitCodes.OK;
        }
    }

    @Command(name = "grow", mixinStandardHelpOptions = true, description = "Grows quorum queue clusters by adding a"
        + " member (replica) on the specified node for all matching queues")
    static final class Grow extends OnAllQueues {
        @Parameters(index = "0", paramLabel = "node")
        String node;

        @Parameters(index = "1", paramLabel = "all | even")
        String strategy;

        @Mixin
        Patterns patterns;

        @Option(names = "--membership", defaultValue = "promotable", description = "accepted; every member here is a"
            + " voter")
        String membership;

        @Override
        public Integer call() {
            if (!strategy.equals("all") && !strategy.equals("even")) {
                throw new CtlException(ExitCodes.USAGE, "strategy '" + strategy + "' is not recognised.");
            }
            checkMembership(membership);
            if (!clusterMembers(ctl.api()).contains(node)) {
                throw notAMember(node);
            }
            java.util.regex.Pattern vhosts = java.util.regex.Pattern.compile(patterns.vhostPattern);
            java.util.regex.Pattern queues = java.util.regex.Pattern.compile(patterns.queuePattern);
            ctl.info("Growing " + strategy + " quorum queues on " + node + "...");
            return run(node, true, (queue, members) -> vhosts.matcher(String.valueOf(queue.get("vhost"))).find()
                && queues.matcher(String.valueOf(queue.get("name"))).find()
                && (strategy.equals("all") || members.size() % 2 == 0));
        }
    }

    @Command(name = "shrink", mixinStandardHelpOptions = true, description = "Shrinks quorum queue clusters by"
        + " removing any members (replicas) on the given node.")
    static final class Shrink extends OnAllQueues {
        @Parameters(index = "0", paramLabel = "node")
        String node;

        @Override
        public Integer call() {
            ctl.info("Shrinking quorum queues on " + node + "...");
            return run(node, false, (queue, members) -> true);
        }
    }

    /**
     * rabbitmq-queues' {@code rebalance}: the leaders of the replicated queues spread over the running nodes, by
     * their groups (docs/quorum-queues.md, "Changing members"); then rabbit_amqqueue:rebalance/3's summary, a table
     * of each node leading some of them and how many.
     */
    @Command(name = "rebalance", mixinStandardHelpOptions = true, description = "Re-balances leaders of replicated"
        + " queues across up-and-running cluster nodes")
    static final class Rebalance extends CtlCommand {
        private static final List<String> COLUMNS = List.of("Node name", "Number of quorum queues");

        @Parameters(index = "0", paramLabel = "all | quorum | stream")
        String type;

        @Mixin
        Patterns patterns;

        @Override
        public Integer call() {
            if (!List.of("all", "quorum", "stream").contains(type)) {
                throw new CtlException(ExitCodes.USAGE, "type " + type + " is not supported. Try one of all, quorum,"
                    + " stream.");
            }
            ctl.info(switch (type) {
                case "all" -> "Re-balancing leaders of all replicated queues...";
                case "quorum" -> "Re-balancing leaders of quorum queues...";
                default -> "Re-balancing leaders of streams...";
            });
            Object answer = ctl.api().call("POST", "/api/rebalance/queues", Map.of("type", type, "vhost_pattern",
                patterns.vhostPattern, "queue_pattern", patterns.queuePattern), Map.of());
            List<Map<String, Object>> rows = new ArrayList<>();
            if (answer instanceof List<?> led) {
                for (Object item : led) {
                    if (item instanceof Map<?, ?> node) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("Node name", node.get("node"));
                        row.put("Number of quorum queues", node.get("quorum_queues"));
                        rows.add(row);
                    }
                }
            }
            Table.printPretty(ctl, COLUMNS, rows);
            return ExitCodes.OK;
        }
    }
}
