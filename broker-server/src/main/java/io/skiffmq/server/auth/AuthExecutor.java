package io.skiffmq.server.auth;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The threads that verify passwords, so that no event loop ever hashes: a fixed pool ({@code skiffmq-auth-N},
 * daemon) with a bounded queue. When the queue is full a login is not queued but refused at once
 * ({@link #submit} fails with {@link RejectedExecutionException}), so a storm of logins costs the loops nothing
 * but the refusals. Thread-safe.
 */
final class AuthExecutor implements AutoCloseable {
    /** Null when checks run on the calling thread ({@link #inline}). */
    private final ThreadPoolExecutor pool;

    /** Checks on the calling thread: for a connection on an embedded channel in tests, never for a listener. */
    static AuthExecutor inline() {
        return new AuthExecutor();
    }

    private AuthExecutor() {
        this.pool = null;
    }

    AuthExecutor(int threads, int queue) {
        AtomicInteger next = new AtomicInteger();
        ThreadFactory factory = task -> {
            Thread thread = new Thread(task, "skiffmq-auth-" + next.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queue),
            factory, new ThreadPoolExecutor.AbortPolicy());
    }

    /** {@code work}'s value, computed on an authentication thread; failed at once when the queue is full. */
    <T> CompletableFuture<T> submit(Supplier<T> work) {
        try {
            return pool == null ? CompletableFuture.completedFuture(work.get())
                : CompletableFuture.supplyAsync(work, pool);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
