package io.skiffmq.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Waiting for the core's futures on a thread that may wait (never an event loop). Stateless. */
final class Futures {
    private Futures() {
    }

    /** Waits for {@code future}; a failure is rethrown as it was raised. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
        }
    }
}
