package io.skiffmq.server.loop;

import io.netty.channel.ChannelHandlerContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/** Reads a connection's loop-owned state from another thread: the read runs on the connection's event loop. */
public final class OnLoop {
    private OnLoop() {
    }

    /**
     * Runs {@code read} on {@code ctx}'s loop; an empty list when there is no loop to run it (the connection is
     * not set up yet, or gone).
     */
    public static <T> CompletableFuture<List<T>> read(ChannelHandlerContext ctx, Supplier<List<T>> read) {
        CompletableFuture<List<T>> result = new CompletableFuture<>();
        if (ctx == null) {
            result.complete(List.of());
            return result;
        }
        try {
            ctx.executor().execute(() -> {
                try {
                    result.complete(read.get());
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.complete(List.of());
        }
        return result;
    }
}
