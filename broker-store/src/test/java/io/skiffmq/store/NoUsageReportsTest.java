package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Chronicle's libraries report their use to Google Analytics when {@code chronicle-analytics} is on the class path
 * and {@code chronicle.analytics.disable} is not set (a broker started with plain {@code java -jar} did, at its second
 * start). The dependency is excluded (the root pom), so nothing is sent however the broker is started.
 */
class NoUsageReportsTest {
    @Test
    void chronicleAnalyticsIsNotOnTheClassPath() {
        assertThatThrownBy(() -> Class.forName("net.openhft.chronicle.analytics.Analytics"))
            .isInstanceOf(ClassNotFoundException.class);
    }
}
