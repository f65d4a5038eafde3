package io.skiffmq.benchmarks;

import io.skiffmq.benchmarks.PerfTestCompare.Result;
import io.skiffmq.benchmarks.PerfTestCompare.Scenario;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The Markdown tables {@link PerfTestCompare} prints from its rounds: throughput and latency per scenario, CPU, and
 * confirm after consume against ordinary confirms. Figures are medians over the rounds with their spread; a ratio
 * is taken within each round, so drift between rounds hits both sides of it alike. Stateless.
 */
final class PerfTestTables {
    private PerfTestTables() {
    }

    /** Prints every table for {@code results}: by scenario, by broker, one result per round. */
    static void print(Map<Scenario, Map<String, List<Result>>> results) {
        System.out.println("| scenario | SkiffMQ msg/s | RabbitMQ msg/s | SkiffMQ / RabbitMQ | SkiffMQ p50 / p99 "
            + "| RabbitMQ p50 / p99 |");
        System.out.println("|---|---|---|---|---|---|");
        results.forEach((scenario, byBroker) -> System.out.println(row(scenario, byBroker)));
        System.out.println();
        System.out.println("Published msg/s, confirm latency, and CPU over the measured seconds in cores of the "
            + "machine's " + Runtime.getRuntime().availableProcessors() + " (the broker, PerfTest, everything else), "
            + "and the broker's CPU per message of the first table; medians.");
        System.out.println();
        System.out.println("| scenario | SkiffMQ published | RabbitMQ published | SkiffMQ confirm p50 / p99 "
            + "| RabbitMQ confirm p50 / p99 | CPU: SkiffMQ + PerfTest + other | CPU: RabbitMQ + PerfTest + other "
            + "| broker CPU per message: SkiffMQ / RabbitMQ |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        results.forEach((scenario, byBroker) -> System.out.println(cpuRow(scenario, byBroker)));
        confirmAfterConsumeTables(results);
    }

    /**
     * Each scenario run against its {@link Scenario#baseline} on SkiffMQ (confirm after consume against ordinary
     * confirms): the publishers' send rate, the figure seed 002 compares, with the ratio taken within each round;
     * RabbitMQ's ordinary confirms beside it as a reference only (it has no such argument), and the load tool's
     * ceiling under the table when {@code amqp091-publish-only} ran.
     */
    private static void confirmAfterConsumeTables(Map<Scenario, Map<String, List<Result>>> results) {
        Map<String, Scenario> byName = new LinkedHashMap<>();
        results.keySet().forEach(s -> byName.put(s.name(), s));
        List<Scenario> compared = results.keySet().stream()
            .filter(s -> s.baseline() != null && byName.containsKey(s.baseline())).toList();
        if (compared.isEmpty()) {
            return;
        }
        System.out.println();
        System.out.println("Confirm after consume (x-confirm-after-consume: true) against ordinary confirms, both on "
            + "SkiffMQ in the same rounds: the publishers' send rate (PerfTest's sent msg/s, in all producers), "
            + "median [min-max]; CAC / ordinary is taken within each round. RabbitMQ has no such argument: its "
            + "column is ordinary confirms, a reference only.");
        System.out.println();
        System.out.println("| queues | SkiffMQ ordinary confirms: sent msg/s | SkiffMQ confirm after consume: sent "
            + "msg/s | CAC / ordinary | confirm p50 / p99: ordinary | confirm p50 / p99: CAC | RabbitMQ ordinary "
            + "confirms: sent msg/s (reference) |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (Scenario cac : compared) {
            Scenario ordinary = byName.get(cac.baseline());
            List<Result> withCac = results.get(cac).get("skiffmq");
            List<Result> without = results.get(ordinary).get("skiffmq");
            List<Result> rabbit = results.get(ordinary).get("rabbitmq");
            System.out.printf(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %s |%n", cac.queues(),
                spread(without, Result::sent), spread(withCac, Result::sent),
                ratio(withCac, without, Result::sent), confirmLatency(without), confirmLatency(withCac),
                rabbit == null ? "not run" : spread(rabbit, Result::sent));
        }
        System.out.println();
        System.out.println("The same runs: received msg/s, consumer latency, CPU in cores (SkiffMQ + PerfTest + "
            + "other) and SkiffMQ's CPU per received message; medians.");
        System.out.println();
        System.out.println("| queues | received: ordinary / CAC | consumer p50 / p99: ordinary | consumer p50 / p99: "
            + "CAC | CPU: ordinary | CPU: CAC | broker CPU per message: ordinary / CAC | nacked msg/s: CAC |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (Scenario cac : compared) {
            Scenario ordinary = byName.get(cac.baseline());
            List<Result> withCac = results.get(cac).get("skiffmq");
            List<Result> without = results.get(ordinary).get("skiffmq");
            System.out.printf(Locale.ROOT, "| %d | %,.0f / %,.0f | %s | %s | %s | %s | %.1f µs / %.1f µs | %,.0f |%n",
                cac.queues(), median(without, Result::received), median(withCac, Result::received),
                latency(without, ordinary), latency(withCac, cac), cpu(without), cpu(withCac),
                median(without, r -> r.brokerMicros(ordinary)), median(withCac, r -> r.brokerMicros(cac)),
                median(withCac, Result::nacked));
        }
        Scenario ceiling = byName.get("amqp091-publish-only");
        if (ceiling != null) {
            Map<String, List<Result>> byBroker = results.get(ceiling);
            System.out.println();
            System.out.printf(Locale.ROOT, "The load tool's ceiling (amqp091-publish-only, the same rounds): one "
                + "PerfTest producer publishes %s msg/s into SkiffMQ%s with nothing consuming or confirming.%n",
                spread(byBroker.get("skiffmq"), Result::sent), byBroker.containsKey("rabbitmq")
                    ? " and " + spread(byBroker.get("rabbitmq"), Result::sent) + " into RabbitMQ" : "");
        }
    }

    /** {@code value(a) / value(b)} within each round: median [min-max]. */
    private static String ratio(List<Result> a, List<Result> b, ToDoubleFunction<Result> value) {
        double[] ratios = new double[Math.min(a.size(), b.size())];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = value.applyAsDouble(a.get(i)) / Math.max(1, value.applyAsDouble(b.get(i)));
        }
        Arrays.sort(ratios);
        return ratios.length == 1 ? String.format(Locale.ROOT, "**%.2f**", ratios[0])
            : String.format(Locale.ROOT, "**%.2f** [%.2f-%.2f]", ratios[ratios.length / 2], ratios[0],
                ratios[ratios.length - 1]);
    }

    private static String row(Scenario scenario, Map<String, List<Result>> byBroker) {
        List<Result> skiff = byBroker.get("skiffmq");
        List<Result> rabbit = byBroker.get("rabbitmq");
        if (rabbit == null) {
            return String.format(Locale.ROOT, "| %s | %s | not run: SkiffMQ only | - | %s | - |",
                scenario.description(), spread(skiff, r -> r.rate(scenario)), latency(skiff, scenario));
        }
        return String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |", scenario.description(),
            spread(skiff, r -> r.rate(scenario)), spread(rabbit, r -> r.rate(scenario)),
            ratio(skiff, rabbit, r -> r.rate(scenario)), latency(skiff, scenario), latency(rabbit, scenario));
    }

    private static String cpuRow(Scenario scenario, Map<String, List<Result>> byBroker) {
        List<Result> skiff = byBroker.get("skiffmq");
        List<Result> rabbit = byBroker.get("rabbitmq");
        if (rabbit == null) {
            return String.format(Locale.ROOT, "| %s | %s | not run | %s | - | %s | - | %.1f µs / - |",
                scenario.name(), spread(skiff, Result::sent), confirmLatency(skiff), cpu(skiff),
                median(skiff, r -> r.brokerMicros(scenario)));
        }
        return String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %.1f µs / %.1f µs |",
            scenario.name(), spread(skiff, Result::sent), spread(rabbit, Result::sent), confirmLatency(skiff),
            confirmLatency(rabbit), cpu(skiff), cpu(rabbit), median(skiff, r -> r.brokerMicros(scenario)),
            median(rabbit, r -> r.brokerMicros(scenario)));
    }

    private static String cpu(List<Result> results) {
        return String.format(Locale.ROOT, "%.2f + %.2f + %.2f", median(results, Result::brokerCores),
            median(results, Result::toolCores), median(results, Result::otherCores));
    }

    private static String confirmLatency(List<Result> results) {
        if (median(results, r -> r.confirmP50()) < 0) {
            return "-";
        }
        return ms((long) median(results, r -> r.confirmP50())) + " / "
            + ms((long) median(results, r -> r.confirmP99()));
    }

    private static String latency(List<Result> results, Scenario scenario) {
        if (scenario.publishOnly()) {
            return "-";
        }
        return ms((long) median(results, r -> r.p50())) + " / " + ms((long) median(results, r -> r.p99()));
    }

    private static double median(List<Result> results, ToDoubleFunction<Result> value) {
        double[] values = results.stream().mapToDouble(value).sorted().toArray();
        return values[values.length / 2];
    }

    private static String spread(List<Result> results, ToDoubleFunction<Result> value) {
        double[] values = results.stream().mapToDouble(value).sorted().toArray();
        if (values.length == 1) {
            return String.format(Locale.ROOT, "%,.0f", values[0]);
        }
        return String.format(Locale.ROOT, "%,.0f [%,.0f-%,.0f]", values[values.length / 2], values[0],
            values[values.length - 1]);
    }

    static String ms(long micros) {
        if (micros < 0) {
            return "-";
        }
        return micros < 1000 ? micros + " µs" : micros < 10_000_000
            ? String.format(Locale.ROOT, "%.1f ms", micros / 1000.0)
            : String.format(Locale.ROOT, "%.1f s", micros / 1_000_000.0);
    }

}
