package io.skiffmq.server.ctl;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rabbitmq-streams}' {@code add_super_stream} and {@code delete_super_stream}, with its options, checks and
 * texts ({@code Elixir.RabbitMQ.CLI.Ctl.Commands.AddSuperStreamCommand} in {@code rabbitmq_stream}), through the
 * HTTP API's {@code /api/stream/super-streams/{vhost}/{name}}: the broker makes or deletes the exchange, the
 * partition streams and their bindings in one request, undoing what it made when a step fails. One instance per
 * run.
 */
final class SuperStreamCommands {
    private SuperStreamCommands() {
    }

    private static String path(String vhost, String name) {
        return "/api/stream/super-streams/" + ApiClient.segment(vhost) + "/" + ApiClient.segment(name);
    }

    @Command(name = "add_super_stream", mixinStandardHelpOptions = true, description = "Adds a super stream: a"
        + " direct exchange with x-super-stream, bound to its partition streams in order.")
    static final class Add extends CtlCommand {
        /** {@code rabbit_resource_monitor_misc:parse_information_unit/1}'s units. */
        private static final Pattern INFORMATION_UNIT = Pattern.compile("^([0-9]+)(kB|Ki|Mi|Gi|Ti|Pi|KB|MB|GB|TB|PB"
            + "|kb|ki|mb|gb|tb|pb|Kb|Mb|Gb|Tb|Pb|kiB|KiB|MiB|GiB|TiB|PiB|kib|mib|gib|tib|pib|KIB|MIB|GIB|TIB|PIB"
            + "|k|K|m|M|g|G|p|P)?$");
        /** {@code rabbit_date_time:parse_duration/1}: ISO 8601. */
        private static final Pattern DURATION = Pattern.compile("^([-+])?P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?"
            + "(T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\\.[0-9]+)?)S)?)?$");

        @Parameters(index = "0", paramLabel = "name", description = "the name of the super stream")
        String name;

        @Option(names = "--partitions", paramLabel = "partitions",
            description = "the number of partitions, default is 3; mutually exclusive with --binding-keys")
        Integer partitions;

        @Option(names = "--binding-keys", paramLabel = "binding-keys",
            description = "comma-separated list of binding keys; mutually exclusive with --partitions")
        String bindingKeys;

        @Option(names = "--routing-keys", paramLabel = "routing-keys", description = "the same as --binding-keys")
        String routingKeys;

        @Option(names = "--max-length-bytes", paramLabel = "max-length-bytes",
            description = "the maximum size of partition streams, e.g. 20gb, 500mb")
        String maxLengthBytes;

        @Option(names = "--max-age", paramLabel = "max-age", description = "the maximum age of partition stream"
            + " segments, an ISO 8601 duration, e.g. PT10M30S for 10 minutes 30 seconds, P5DT8H for 5 days 8 hours")
        String maxAge;

        @Option(names = "--stream-max-segment-size-bytes", paramLabel = "stream-max-segment-size-bytes",
            description = "the maximum size of partition stream segments, e.g. 500mb, 1gb")
        String segmentSize;

        @Option(names = "--leader-locator", paramLabel = "leader-locator",
            description = "leader locator strategy for partition streams: client-local, balanced")
        String leaderLocator;

        @Option(names = "--initial-cluster-size", paramLabel = "initial-cluster-size",
            description = "the initial cluster size of partition streams")
        String initialClusterSize;

        @Override
        public Integer call() {
            Map<String, Object> body = new LinkedHashMap<>();
            String keys = bindingKeys != null ? bindingKeys : routingKeys;
            if (routingKeys != null && bindingKeys != null) {
                throw usage("Specify --binding-keys only.");
            }
            if (partitions != null && keys != null) {
                throw usage("Specify --partitions or --binding-keys, not both.");
            }
            if (partitions != null && partitions < 1) {
                throw usage("The partition number must be greater than 0");
            }
            if (keys != null) {
                body.put("binding-keys", keys);
            } else {
                body.put("partitions", partitions == null ? 3 : partitions);
            }
            body.put("arguments", arguments());
            ctl.info("Adding a super stream...");
            ctl.api().call("PUT", path(ctl.vhost, name), body, Map.of());
            ctl.out().println("Super stream " + name + " has been created");
            return ExitCodes.OK;
        }

        /** The partition streams' arguments, in the stream protocol's names, checked in RabbitMQ's order. */
        private Map<String, Object> arguments() {
            Map<String, Object> arguments = new LinkedHashMap<>();
            if (maxLengthBytes != null) {
                arguments.put("max-length-bytes", informationUnit(maxLengthBytes, "Invalid value for"
                    + " --max-length-bytes, valid example values: 100gb, 50mb"));
            }
            if (maxAge != null) {
                arguments.put("max-age", seconds(maxAge) + "s");
            }
            if (segmentSize != null) {
                arguments.put("stream-max-segment-size-bytes", informationUnit(segmentSize, "Invalid value for"
                    + " --stream-max-segment-size-bytes, valid example values: 100gb, 50mb"));
            }
            if (leaderLocator != null) {
                if (!Pattern.matches("client-local|balanced|random|least-leaders", leaderLocator)) {
                    throw usage("Invalid value for --leader-locator, valid values are client-local, balanced.");
                }
                arguments.put("queue-leader-locator", leaderLocator);
            }
            if (initialClusterSize != null) {
                long size;
                try {
                    size = Long.parseLong(initialClusterSize.strip());
                } catch (NumberFormatException e) {
                    throw usage("Invalid value for --initial-cluster-size, the value must be a positive integer.");
                }
                if (size <= 0) {
                    throw usage("Invalid value for --initial-cluster-size, the value must be positive.");
                }
                arguments.put("initial-cluster-size", Long.toString(size));
            }
            return arguments;
        }

        /** Bytes: powers of 1000 for k, M, G, T, P (and kB…), of 1024 for Ki, Mi… (RabbitMQ 3.13 and later). */
        static String informationUnit(String value, String invalid) {
            Matcher m = INFORMATION_UNIT.matcher(value);
            if (!m.matches()) {
                throw usage(invalid);
            }
            String unit = m.group(2) == null ? "" : m.group(2);
            long multiplier = switch (unit.isEmpty() ? "" : unit.substring(0, 1).toLowerCase()
                + (unit.length() > 1 && Character.toLowerCase(unit.charAt(1)) == 'i' ? "i" : "")) {
                case "" -> 1;
                case "k" -> 1000L;
                case "m" -> 1000_000L;
                case "g" -> 1000_000_000L;
                case "t" -> 1000_000_000_000L;
                case "p" -> 1000_000_000_000_000L;
                case "ki" -> 1L << 10;
                case "mi" -> 1L << 20;
                case "gi" -> 1L << 30;
                case "ti" -> 1L << 40;
                // RabbitMQ's PiB is 1024^4 × 2014 (sic); the units are its, this one is read as it reads it
                case "pi" -> (1L << 40) * 2014;
                default -> throw usage(invalid);
            };
            try {
                return Long.toString(Math.multiplyExact(Long.parseLong(m.group(1)), multiplier));
            } catch (ArithmeticException | NumberFormatException e) {
                throw usage(invalid);
            }
        }

        /** An ISO 8601 duration in seconds, as RabbitMQ counts it (a year 365 days, a month 30). */
        static long seconds(String duration) {
            Matcher m = DURATION.matcher(duration);
            if (!m.matches()) {
                throw usage("Invalid value for --max-age, the value must a ISO 8601 duration, e.g. e.g. PT10M30S"
                    + " for 10 minutes 30 seconds, P5DT8H for 5 days 8 hours.");
            }
            long[] scale = {365 * 86400L, 30 * 86400L, 86400L, 0, 3600L, 60L};
            long seconds = 0;
            for (int group = 2; group <= 7; group++) {
                if (group != 5 && m.group(group) != null) {
                    seconds += Long.parseLong(m.group(group)) * scale[group - 2];
                }
            }
            if (m.group(8) != null) {
                seconds += Long.parseLong(m.group(8).replaceFirst("\\..*", ""));
            }
            return seconds;
        }

        private static CtlException usage(String message) {
            return new CtlException(ExitCodes.USAGE, message);
        }
    }

    @Command(name = "delete_super_stream", mixinStandardHelpOptions = true,
        description = "Deletes a super stream: its exchange and its partition streams.")
    static final class Delete extends CtlCommand {
        @Parameters(index = "0", paramLabel = "name", description = "the name of the super stream to delete")
        String name;

        @Override
        public Integer call() {
            ctl.info("Deleting a super stream...");
            ctl.api().call("DELETE", path(ctl.vhost, name), null, Map.of());
            ctl.out().println("Super stream " + name + " has been deleted");
            return ExitCodes.OK;
        }
    }
}
