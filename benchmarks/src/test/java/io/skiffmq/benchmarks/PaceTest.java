package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A paced sender's schedule, on stepped time. */
class PaceTest {
    private static final long MS = 1_000_000;

    @Test
    void messagesFallDueAtTheRate() {
        Pace pace = new Pace(1000, 5 * MS);
        assertThat(pace.due(4 * MS)).isZero();
        assertThat(pace.due(5 * MS)).isEqualTo(1);
        assertThat(pace.due(5 * MS + MS - 1)).isEqualTo(1);
        assertThat(pace.due(15 * MS)).isEqualTo(11);
        assertThat(pace.dueAt(0)).isEqualTo(5 * MS);
        assertThat(pace.dueAt(10)).isEqualTo(15 * MS);
    }

    @Test
    void aLateSenderStaysOnTheScheduleAndSoCatchesUp() {
        Pace pace = new Pace(1000, 0);
        // nothing sent for 50 ms: all 51 are due, each stamped with its own time
        assertThat(pace.due(50 * MS)).isEqualTo(51);
        assertThat(pace.dueAt(3)).isEqualTo(3 * MS);
    }

    @Test
    void forgivingMakesTheNextMessageDueNow() {
        Pace pace = new Pace(1000, 0);
        pace.forgive(100 * MS, 20);
        assertThat(pace.dueAt(20)).isEqualTo(100 * MS);
        assertThat(pace.due(100 * MS)).isEqualTo(21);
        assertThat(pace.due(101 * MS)).isEqualTo(22);
    }

    @Test
    void aSenderOnScheduleKeepsItsSchedule() {
        Pace pace = new Pace(1000, 0);
        // at 10 ms, 11 were due and 11 went
        pace.forgive(10 * MS, 11);
        assertThat(pace.dueAt(0)).isZero();
        assertThat(pace.due(10 * MS)).isEqualTo(11);
    }
}
