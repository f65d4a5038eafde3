package io.skiffmq.codec.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.function.ThrowingSupplier;

/**
 * A guard against runaway (say quadratic) decoding of hostile input, counted in the calling thread's CPU time:
 * a wall-clock timeout would measure the machine's load as well, and fail on a busy CI host.
 */
public final class CpuBudget {
    private CpuBudget() {
    }

    /** What the call returns, once it is checked to have spent less than {@code budget} of this thread's CPU. */
    public static <T> T within(Duration budget, ThrowingSupplier<T> call) {
        long before = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        T result;
        try {
            result = call.get();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
        long spent = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - before;
        assertThat(Duration.ofNanos(spent)).as("CPU time spent").isLessThan(budget);
        return result;
    }
}
