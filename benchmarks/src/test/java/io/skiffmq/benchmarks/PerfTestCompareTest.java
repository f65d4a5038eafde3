package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** PerfTest 2.22.1's per-second lines as {@code benchmarks/compare} reads them (lines from real runs). */
class PerfTestCompareTest {
    @Test
    void autoAckLineHasRatesAndConsumerLatency() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse("id: test-193504-258, time 7.000 s, sent: 243940 "
            + "msg/s, received: 244484 msg/s, min/median/75th/95th/99th consumer latency: 92/3406/5207/9385/18646 µs");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(7.0, 243940, 0, 0, 244484, 3406, 18646, -1, -1));
    }

    @Test
    void confirmLineHasConfirmedRateAndBothLatencies() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse("id: bench-x, time 5.002 s, sent: 70737 msg/s, "
            + "confirmed: 70439 msg/s, nacked: 0 msg/s, received: 69795 msg/s, min/median/75th/95th/99th consumer "
            + "latency: 55/8248/11461/20007/26357 µs, confirm latency: 986/8773/11362/19000/25000 µs");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(5.002, 70737, 70439, 0, 69795, 8248, 26357, 8773,
            25000));
    }

    @Test
    void nackedRateIsRead() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse("id: t1, time 2.002 s, sent: 24938 msg/s, "
            + "confirmed: 24906 msg/s, nacked: 12 msg/s, received: 24191 msg/s, min/median/75th/95th/99th consumer "
            + "latency: 11431/68026/103766/170518/185964 µs, confirm latency: 46563/119415/173518/240550/273858 µs");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(2.002, 24938, 24906, 12, 24191, 68026, 185964,
            119415, 273858));
    }

    @Test
    void confirmAfterConsumeScenariosAreTheirBaselinesFlagsWithTheBooleanQueueArgument() {
        // PerfTest 2.22.1's -qa turns "true" into a Boolean (convertKeyValuePairs), which the broker's strict check
        // of x-confirm-after-consume needs: a longstr "true" is refused with 406
        for (int queues : new int[] {1, 4, 8}) {
            PerfTestCompare.Scenario cac = scenario("amqp091-cac-q" + queues);
            PerfTestCompare.Scenario ordinary = scenario("amqp091-confirms-q" + queues);
            assertThat(cac.baseline()).isEqualTo(ordinary.name());
            assertThat(cac.skiffmqOnly()).isTrue();
            assertThat(ordinary.skiffmqOnly()).isFalse();
            assertThat(cac.queues()).isEqualTo(queues);
            assertThat(cac.flags()).containsSubsequence(ordinary.flags())
                .endsWith("-qa", PerfTestCompare.CONFIRM_AFTER_CONSUME).hasSize(ordinary.flags().size() + 2);
            assertThat(ordinary.flags()).containsSubsequence("--queue-pattern-to", String.valueOf(queues), "-x",
                String.valueOf(queues), "-y", String.valueOf(queues));
            assertThat(cac.brokers(1)).containsExactly("skiffmq");
            assertThat(ordinary.brokers(2)).containsExactly("rabbitmq", "skiffmq");
        }
    }

    @Test
    void topicScenarioHas100000BindingsOfWhichOnlyTheSubscribersMatchItsKey() {
        PerfTestCompare.Scenario topic = scenario("amqp091-topic-100k");
        PerfTestCompare.Topology topology = topic.topology();
        assertThat(topology.keys().size() + topology.unrelatedBindings()).isEqualTo(100_000);
        assertThat(topic.flags()).containsSubsequence("-k", "orders.eu.created").containsSubsequence(
            "--queue-pattern-to", String.valueOf(topology.keys().size()), "-y", String.valueOf(topology.keys().size()));
        assertThat(topology.keys()).allMatch(key -> matches(key, "orders.eu.created"));
        java.util.Set<String> unrelated = new java.util.HashSet<>();
        for (int i = 0; i < topology.unrelatedBindings(); i++) {
            String key = PerfTestCompare.Topology.unrelatedKey(i);
            assertThat(matches(key, "orders.eu.created")).as(key).isFalse();
            assertThat(unrelated.add(key)).as(key).isTrue();
        }
        assertThat(matches("orders.*.created", "orders.eu.created")).isTrue(); // the oracle itself
        assertThat(matches("r5.#", "orders.eu.created")).isFalse();
        assertThat(matches("#.created", "created")).isTrue();
        assertThat(matches("orders.*", "orders.eu.created")).isFalse();
    }

    /**
     * AMQP 0-9-1 topic matching as a regular expression over {@code "." + key}: a word is {@code \\.word}, {@code *}
     * one word of any text, {@code #} zero or more of them.
     */
    private static boolean matches(String pattern, String key) {
        StringBuilder regex = new StringBuilder();
        for (String word : pattern.split("\\.", -1)) {
            regex.append(switch (word) {
                case "#" -> "(?:\\.[^.]*)*";
                case "*" -> "\\.[^.]*";
                default -> "\\." + java.util.regex.Pattern.quote(word);
            });
        }
        return ("." + key).matches(regex.toString());
    }

    private static PerfTestCompare.Scenario scenario(String name) {
        return PerfTestCompare.SCENARIOS.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void publishOnlyLineHasNoReceivedRate() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse(
            "id: test-193545-374, time 4.000 s, sent: 241976 msg/s");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(4.0, 241976, 0, 0, 0, -1, -1, -1, -1));
    }

    @Test
    void otherLinesAreNotSeconds() {
        assertThat(PerfTestCompare.Second.parse("id: test-193504-258, sending rate avg: 173330 msg/s")).isNull();
        assertThat(PerfTestCompare.Second.parse("test stopped (Reached time limit)")).isNull();
    }
}
