package io.skiffmq.server.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.server.logging.LogLimiter.Decision;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The token bucket behind rate-limited log lines, on a clock the test moves. */
class LogLimiterTest {
    private long now = 1_000;
    private final LogLimiter limiter = new LogLimiter(5, 5, () -> now);

    @Test
    void aBurstIsLoggedThenLinesAreSuppressedAndCountedForOneSummary() {
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.acquire()).isEqualTo(Decision.LOG);
        }
        assertThat(limiter.acquire()).as("the first suppressed asks for a summary").isEqualTo(Decision.SUPPRESS_FIRST);
        for (int i = 0; i < 98; i++) {
            assertThat(limiter.acquire()).isEqualTo(Decision.SUPPRESS);
        }
        now += TimeUnit.MILLISECONDS.toNanos(200); // one token, at 5 a second
        assertThat(limiter.acquire()).isEqualTo(Decision.LOG);
        assertThat(limiter.acquire()).isEqualTo(Decision.SUPPRESS);
        now += TimeUnit.SECONDS.toNanos(5);
        LogLimiter.Suppressed summary = limiter.takeSuppressed();
        assertThat(summary.count()).isEqualTo(100);
        assertThat(summary.windowNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(5_200));
        assertThat(limiter.takeSuppressed().count()).as("taken once").isZero();
    }

    @Test
    void tokensRefillUpToTheBurstOnly() {
        now += TimeUnit.HOURS.toNanos(1);
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.acquire()).isEqualTo(Decision.LOG);
        }
        assertThat(limiter.acquire()).isEqualTo(Decision.SUPPRESS_FIRST);
        limiter.takeSuppressed();
        assertThat(limiter.acquire()).as("a new window after the summary").isEqualTo(Decision.SUPPRESS_FIRST);
    }

    @Test
    void aLimitOfNothingIsRefused() {
        assertThatThrownBy(() -> new LogLimiter(0, 5, () -> now)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LogLimiter(5, 0, () -> now)).isInstanceOf(IllegalArgumentException.class);
    }
}
