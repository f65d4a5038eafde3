package io.skiffmq.server.metrics;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Metric families gathered during one scrape: each data point added goes to its family by name, families keep the
 * order they were first met. Counter names are given without {@code _total}, which the text format adds. Used by one
 * thread, for one scrape.
 */
final class Families {
    private final Map<String, CounterSnapshot.Builder> counters = new LinkedHashMap<>();
    private final Map<String, GaugeSnapshot.Builder> gauges = new LinkedHashMap<>();

    void counter(String name, String help, double value, String... labels) {
        counters.computeIfAbsent(name, n -> CounterSnapshot.builder().name(n).help(help))
            .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).labels(Labels.of(labels))
                .build());
    }

    void gauge(String name, String help, double value, String... labels) {
        gauges.computeIfAbsent(name, n -> GaugeSnapshot.builder().name(n).help(help))
            .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).labels(Labels.of(labels)).build());
    }

    MetricSnapshots build() {
        MetricSnapshots.Builder all = MetricSnapshots.builder();
        for (GaugeSnapshot.Builder gauge : gauges.values()) {
            all.metricSnapshot(gauge.build());
        }
        for (CounterSnapshot.Builder counter : counters.values()) {
            all.metricSnapshot((MetricSnapshot) counter.build());
        }
        return all.build();
    }
}
