package io.skiffmq.server.ctl;

import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** rabbitmqctl's {@code close_connection}, by the connection's name (as {@code list_connections name} shows it). */
final class ConnectionCommands {
    private ConnectionCommands() {
    }

    @Command(name = "close_connection", mixinStandardHelpOptions = true, description = "Closes a connection:"
        + " 0-9-1 with 320 CONNECTION_FORCED, AMQP 1.0 with amqp:connection:forced, and the reason.")
    static final class CloseConnection implements Callable<Integer> {
        @ParentCommand
        SkiffmqCtl ctl;

        @Parameters(index = "0", paramLabel = "name", description = "the connection's name (list_connections name)")
        String name;

        @Parameters(index = "1", paramLabel = "reason", description = "what the client is told")
        String reason;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            ctl.info("Closing connection " + name + ", reason: " + reason + "...");
            api.call("DELETE", "/api/connections/" + ApiClient.segment(name), null, Map.of("X-Reason", reason));
            return ExitCodes.OK;
        }
    }
}
