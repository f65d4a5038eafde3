package io.skiffmq.server.ctl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import tools.jackson.core.JacksonException;

/**
 * rabbitmqctl's {@code export_definitions} and {@code import_definitions}: RabbitMQ's definitions JSON, from and
 * to the HTTP API's {@code /api/definitions}, in a file or on standard output / input ({@code -}).
 */
final class DefinitionsCommands {
    private DefinitionsCommands() {
    }

    @Command(name = "export_definitions", mixinStandardHelpOptions = true,
        description = "Writes the node's definitions (users, virtual hosts, permissions, queues, exchanges, bindings)"
            + " as JSON to a file, or to standard output with -.")
    static final class Export extends CtlCommand {
        @Parameters(index = "0", paramLabel = "file|-")
        String target;

        @Override
        public Integer call() {
            ApiClient api = ctl.api();
            Object definitions = api.get("/api/definitions");
            String json = ApiClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(definitions);
            if (target.equals("-")) {
                ctl.out().println(json);
                return ExitCodes.OK;
            }
            ctl.info("Exporting definitions in JSON to a file at \"" + target + "\" ...");
            try {
                Files.writeString(Path.of(target), json + "\n", StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new CtlException(ExitCodes.DATA_ERROR, "cannot write " + target + ": " + e);
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "import_definitions", mixinStandardHelpOptions = true,
        description = "Imports definitions JSON (RabbitMQ's, or an export) from a file, or from standard input with"
            + " -. What exists is kept or updated; the import is not atomic.")
    static final class Import extends CtlCommand {
        @Parameters(index = "0", paramLabel = "file|-")
        String source;

        @Override
        public Integer call() {
            String text;
            try {
                text = source.equals("-") ? read(ctl.in()) : Files.readString(Path.of(source), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new CtlException(ExitCodes.DATA_ERROR, "cannot read " + source + ": " + e);
            }
            Object definitions;
            try {
                definitions = ApiClient.JSON.readValue(text, Object.class);
            } catch (JacksonException e) {
                throw new CtlException(ExitCodes.DATA_ERROR, source + " is not JSON: " + e.getOriginalMessage());
            }
            if (!(definitions instanceof Map<?, ?>)) {
                throw new CtlException(ExitCodes.DATA_ERROR, source + " is not a JSON object of definitions");
            }
            ApiClient api = ctl.api();
            ctl.info("Importing definitions in JSON from a file at \"" + source + "\" ...");
            api.call("POST", "/api/definitions", definitions, Map.of());
            return ExitCodes.OK;
        }

        private static String read(InputStream in) throws IOException {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
