package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class FailedLoginsTest {
    private long now;

    @Test
    void anAddressSpendsItsBurstThenEarnsFailuresBackAtTheRate() throws Exception {
        FailedLogins limit = new FailedLogins(2, 3, () -> now);
        InetAddress a = InetAddress.getByName("192.0.2.1");
        InetAddress b = InetAddress.getByName("192.0.2.2");
        for (int i = 0; i < 3; i++) {
            assertThat(limit.allowed(a)).isTrue();
            limit.failed(a);
        }
        assertThat(limit.allowed(a)).isFalse();
        assertThat(limit.allowed(b)).as("per address").isTrue();
        now += 499_000_000L;
        assertThat(limit.allowed(a)).as("half a second earns one back at 2/s").isFalse();
        now += 1_000_000L;
        assertThat(limit.allowed(a)).isTrue();
        limit.failed(a);
        assertThat(limit.allowed(a)).isFalse();
        now += 60_000_000_000L;
        for (int i = 0; i < 3; i++) {
            limit.failed(a);
        }
        assertThat(limit.allowed(a)).as("never more than the burst saved up").isFalse();
    }

    @Test
    void aBurstOfZeroSwitchesTheLimitOff() throws Exception {
        FailedLogins limit = new FailedLogins(1, 0, () -> now);
        InetAddress a = InetAddress.getByName("192.0.2.1");
        for (int i = 0; i < 100; i++) {
            limit.failed(a);
        }
        assertThat(limit.allowed(a)).isTrue();
    }
}
