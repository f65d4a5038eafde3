package io.skiffmq.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Steps that each wait out something of their own (an append timeout, say), run at once instead of one after
 * another: each on a thread of its own (not the common pool, which has one thread on 2 cores), each judged as it
 * would be alone. The caller's thread waits for all of them and rethrows the first failure as it was thrown.
 */
final class SideBySide {
    /** A step: may throw, as a test's body does. */
    interface Step {
        void run() throws Exception;
    }

    private SideBySide() {
    }

    static void run(Step... steps) throws Exception {
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int i = 0; i < steps.length; i++) {
            Step step = steps[i];
            String name = "side-by-side-" + i;
            running.add(CompletableFuture.runAsync(() -> {
                try {
                    step.run();
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, task -> new Thread(task, name).start()));
        }
        Throwable first = null;
        for (CompletableFuture<Void> step : running) {
            try {
                step.join();
            } catch (CompletionException e) {
                if (first == null) {
                    first = e.getCause();
                }
            }
        }
        if (first instanceof Exception e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
    }
}
