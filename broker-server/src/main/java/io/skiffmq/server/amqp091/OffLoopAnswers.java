package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.BrokerException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Methods whose answer comes from off the event loop (a login, the disk, a queue): the connection is suspended
 * ({@link Amqp091ConnectionHandler#suspend}) until the answer is back on the loop and handled, so frames read
 * meanwhile wait, in order. A failure becomes the channel's or the connection's error, as its reply code says.
 * Owned by the connection's event loop; the futures complete anywhere and hand back to it.
 */
final class OffLoopAnswers {
    private static final System.Logger LOG = System.getLogger(Amqp091ConnectionHandler.class.getName());

    private final Amqp091ConnectionHandler connection;
    /** The broker's management threads, for work that may wait for the disk. */
    private final Executor management;

    OffLoopAnswers(Amqp091ConnectionHandler connection, Executor management) {
        this.connection = connection;
        this.management = management;
    }

    /**
     * Runs {@code then} with the future's value on the event loop, the connection suspended meanwhile; a failure
     * closes the channel (or the connection) as its error says.
     *
     * @param channel the channel the method came on; null for the connection's own
     */
    <T> void await(Amqp091Channel channel, CompletableFuture<T> future, Method cause, Consumer<T> then) {
        if (future.isDone()) {
            T value;
            try {
                value = future.join();
            } catch (CompletionException e) {
                throw translate(e.getCause(), cause);
            }
            then.accept(value);
            return;
        }
        connection.suspend();
        future.whenComplete((value, failure) -> connection.executor().execute(() -> {
            try {
                if (failure != null) {
                    throw translate(failure instanceof CompletionException c ? c.getCause() : failure, cause);
                }
                then.accept(value);
            } catch (Amqp091Exception e) {
                connection.handleError(channel, e);
            } catch (RuntimeException e) {
                connection.internalError(e, cause);
            } finally {
                connection.resume();
            }
        }));
    }

    /** {@link #await} for work that may wait for the disk: it runs on the broker's management threads. */
    <T> void offload(Amqp091Channel channel, Supplier<T> work, Method cause, Consumer<T> then) {
        await(channel, CompletableFuture.supplyAsync(work, management), cause, then);
    }

    private Amqp091Exception translate(Throwable failure, Method cause) {
        if (failure instanceof Amqp091Exception e) {
            return e;
        }
        if (failure instanceof BrokerException e) {
            return Amqp091Exception.of(e, cause);
        }
        LOG.log(System.Logger.Level.ERROR, "connection " + connection.remote() + ": internal error", failure);
        return Amqp091Exception.of(ReplyCode.INTERNAL_ERROR, cause, "internal error: %s", failure);
    }
}
