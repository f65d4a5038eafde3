package io.skiffmq.server.ctl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code delete_queue} and {@code purge_queue}, and rabbitmq-queues' {@code quorum_status} ({@code -p}
 * names the virtual host), through the HTTP API's queues, with rabbitmqctl's texts and exit codes. One instance per
 * run.
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
}
