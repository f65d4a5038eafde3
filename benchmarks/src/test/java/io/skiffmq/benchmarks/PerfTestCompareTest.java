package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** PerfTest 2.22.1's per-second lines as {@code benchmarks/compare} reads them (lines from real runs). */
class PerfTestCompareTest {
    @Test
    void autoAckLineHasRatesAndConsumerLatency() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse("id: test-193504-258, time 7.000 s, sent: 243940 "
            + "msg/s, received: 244484 msg/s, min/median/75th/95th/99th consumer latency: 92/3406/5207/9385/18646 µs");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(7.0, 243940, 0, 244484, 3406, 18646, -1, -1));
    }

    @Test
    void confirmLineHasConfirmedRateAndBothLatencies() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse("id: bench-x, time 5.002 s, sent: 70737 msg/s, "
            + "confirmed: 70439 msg/s, nacked: 0 msg/s, received: 69795 msg/s, min/median/75th/95th/99th consumer "
            + "latency: 55/8248/11461/20007/26357 µs, confirm latency: 986/8773/11362/19000/25000 µs");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(5.002, 70737, 70439, 69795, 8248, 26357, 8773,
            25000));
    }

    @Test
    void publishOnlyLineHasNoReceivedRate() {
        PerfTestCompare.Second second = PerfTestCompare.Second.parse(
            "id: test-193545-374, time 4.000 s, sent: 241976 msg/s");
        assertThat(second).isEqualTo(new PerfTestCompare.Second(4.0, 241976, 0, 0, -1, -1, -1, -1));
    }

    @Test
    void otherLinesAreNotSeconds() {
        assertThat(PerfTestCompare.Second.parse("id: test-193504-258, sending rate avg: 173330 msg/s")).isNull();
        assertThat(PerfTestCompare.Second.parse("test stopped (Reached time limit)")).isNull();
    }
}
