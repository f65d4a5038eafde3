package io.skiffmq.codec.testing;

import java.lang.management.ManagementFactory;

/** How many bytes a piece of work allocates per call, measured on the calling thread. */
public final class Allocations {
    /** Keeps each result reachable, so that the JIT cannot leave out what the work makes. */
    private static Object sink;

    /** The work measured; its result is kept until the next call. */
    @FunctionalInterface
    public interface Work {
        Object run() throws Exception;
    }

    private Allocations() {
    }

    /** Bytes this thread allocates per call of {@code work}, over {@code rounds} calls after as many to warm up. */
    public static long perCall(int rounds, Work work) throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long allocated = 0;
        for (int round = 0; round < 2; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) {
                sink = work.run();
            }
            // the first round warms up; the second is measured
            allocated = (threads.getCurrentThreadAllocatedBytes() - before) / rounds;
        }
        sink = null;
        return allocated;
    }
}
