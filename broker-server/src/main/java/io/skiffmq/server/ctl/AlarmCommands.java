package io.skiffmq.server.ctl;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * rabbitmqctl's {@code set_vm_memory_high_watermark <fraction> | absolute <value>} and
 * {@code set_disk_free_limit <disk_limit> | mem_relative <fraction>}, validated as rabbitmqctl validates them, on
 * the HTTP API's {@code PUT /api/app/memory-high-watermark} and {@code /disk-free-limit}. The new limit lasts until
 * the node restarts, as in RabbitMQ. A fraction of memory is of the maximum heap here, as the
 * {@code memory-high-watermark} setting reads it (RabbitMQ's is of the machine's RAM).
 */
final class AlarmCommands {
    /** An integer and one of rabbitmqctl's memory units ({@code RabbitMQ.CLI.Core.Memory}). */
    private static final Pattern WITH_UNIT = Pattern.compile("(-?[0-9]+)(k|kiB|M|MiB|G|GiB|kB|MB|GB|)");

    private AlarmCommands() {
    }

    @Command(name = "set_vm_memory_high_watermark", mixinStandardHelpOptions = true,
        description = "Sets the memory limit above which publishers are blocked, until the next restart:"
            + " <fraction> of the maximum heap, or absolute <value> with units, e.g. 1GB.")
    static final class SetMemoryHighWatermark extends CtlCommand {
        @Parameters(paramLabel = "<fraction> | absolute <value>", arity = "0..*")
        List<String> args = List.of();

        @Override
        public Integer call() {
            Map<String, Object> body;
            String shown;
            if (!args.isEmpty() && args.get(0).equals("absolute")) {
                arity(2);
                long bytes = bytes(args.get(1), true);
                body = Map.of("absolute", bytes);
                shown = args.get(1) + " bytes";
            } else {
                arity(1);
                double fraction = fraction(args.get(0));
                if (fraction < 0 || fraction > 1) {
                    throw usage("The threshold should be a fraction between 0.0 and 1.0");
                }
                body = Map.of("relative", fraction);
                shown = args.get(0);
            }
            ApiClient api = ctl.api();
            ctl.info("Setting memory threshold on " + node(api) + " to " + shown + " ...");
            api.call("PUT", "/api/app/memory-high-watermark", body, Map.of());
            return ExitCodes.OK;
        }

        private void arity(int wanted) {
            if (args.size() < wanted) {
                throw usage("Not enough arguments.");
            }
            if (args.size() > wanted) {
                throw usage("Too many arguments.");
            }
        }
    }

    @Command(name = "set_disk_free_limit", mixinStandardHelpOptions = true,
        description = "Sets the free disk space below which publishers are blocked, until the next restart:"
            + " <disk_limit> with units, e.g. 1GB, or mem_relative <fraction> of the machine's RAM.")
    static final class SetDiskFreeLimit extends CtlCommand {
        @Parameters(paramLabel = "<disk_limit> | mem_relative <fraction>", arity = "0..*")
        List<String> args = List.of();

        @Override
        public Integer call() {
            Map<String, Object> body;
            String banner;
            boolean relative = !args.isEmpty() && args.get(0).equals("mem_relative");
            if (args.isEmpty() || relative && args.size() < 2) {
                throw usage("Not enough arguments.");
            }
            if (args.size() > (relative ? 2 : 1)) {
                throw usage("Too many arguments.");
            }
            if (relative) {
                double fraction = fraction(args.get(1));
                if (fraction < 0) {
                    throw usage("Bad argument.");
                }
                body = Map.of("mem_relative", fraction);
                banner = " to " + args.get(1) + " times the total RAM ...";
            } else {
                body = Map.of("absolute", bytes(args.get(0), false));
                banner = " to " + args.get(0) + " bytes ...";
            }
            ApiClient api = ctl.api();
            ctl.info("Setting disk free limit on " + node(api) + banner);
            api.call("PUT", "/api/app/disk-free-limit", body, Map.of());
            return ExitCodes.OK;
        }
    }

    /** An integer with one of rabbitmqctl's memory units: k, kiB, M, MiB, G, GiB by 1024; kB, MB, GB by 1000. */
    static long bytes(String value, boolean memory) {
        Matcher m = WITH_UNIT.matcher(value);
        if (!m.matches()) {
            if (memory && value.matches("-?[0-9]+\\.[0-9]+.*")) {
                throw usage("The threshold should be an integer.");
            }
            throw usage(memory ? "Invalid units." : "Bad argument.");
        }
        long multiplier = switch (m.group(2)) {
            case "k", "kiB" -> 1L << 10;
            case "M", "MiB" -> 1L << 20;
            case "G", "GiB" -> 1L << 30;
            case "kB" -> 1000L;
            case "MB" -> 1000_000L;
            case "GB" -> 1000_000_000L;
            default -> 1L;
        };
        try {
            long bytes = Math.multiplyExact(Long.parseLong(m.group(1)), multiplier);
            if (bytes < 0 || memory && bytes == 0) {
                throw usage("Bad argument.");
            }
            return bytes;
        } catch (ArithmeticException | NumberFormatException e) {
            throw usage("Bad argument.");
        }
    }

    private static double fraction(String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw usage("Bad argument.");
        }
    }

    private static String node(ApiClient api) {
        return String.valueOf(((Map<?, ?>) api.get("/api/overview")).get("node"));
    }

    private static CtlException usage(String message) {
        return new CtlException(ExitCodes.USAGE, message);
    }
}
