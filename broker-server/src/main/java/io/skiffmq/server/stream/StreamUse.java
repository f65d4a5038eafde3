package io.skiffmq.server.stream;

import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.store.stream.StreamLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One stream as one connection uses it, while it has publishers or subscriptions there: the stream and its log, the
 * confirms that wait for the log to commit, the subscriptions that read it, and the two things the connection
 * listens to: the log's commits (which confirm and deliver) and the stream's deletion (which ends its publishers and
 * subscriptions and tells the client with a {@code metadata_update}). Both arrive on other threads and are handed to
 * the connection's loop; several commits in one burst cost one hand-over.
 *
 * <p>Owned by the connection's event loop, but for {@link #committed}, which the log calls on its writer or syncer
 * thread.
 */
final class StreamUse implements StreamLog.CommitListener {
    private final String name;
    private final StreamQueue queue;
    private final StreamLog log;
    private final StreamConnectionHandler connection;
    private final ConfirmQueue confirms = new ConfirmQueue();
    private final List<Subscription> subscriptions = new ArrayList<>(2);
    private final AtomicBoolean commitAsked = new AtomicBoolean();
    private final Runnable onCommitted = this::onCommitted;
    private final Runnable cancelWatch;
    private int publishers;
    private boolean released;

    StreamUse(String name, StreamQueue queue, StreamLog log, StreamConnectionHandler connection) {
        this.name = name;
        this.queue = queue;
        this.log = log;
        this.connection = connection;
        log.addListener(this);
        // on the deleting thread: handed to this connection's loop
        this.cancelWatch = connection.vhost().whenDeleted(Destination.queue(name),
            () -> connection.executor().execute(() -> connection.uses().deleted(this)));
    }

    String name() {
        return name;
    }

    StreamQueue queue() {
        return queue;
    }

    StreamLog log() {
        return log;
    }

    /** Any thread: the log committed more; the connection's loop confirms and delivers once per burst. */
    @Override
    public void committed(long committedOffset) {
        if (commitAsked.compareAndSet(false, true)) {
            connection.executor().execute(onCommitted);
        }
    }

    private void onCommitted() {
        commitAsked.set(false);
        if (released) {
            return;
        }
        confirmCommitted();
        for (int i = 0; i < subscriptions.size(); i++) {
            subscriptions.get(i).pump();
        }
        connection.flushLater();
    }

    /** Confirms what waits and is committed. */
    void confirmCommitted() {
        if (confirms.size() > 0) {
            connection.flow().answered(confirms.confirmThrough(log.committedOffset(), connection.output(),
                connection.maxConfirmIds(), connection.counters()));
        }
    }

    ConfirmQueue confirms() {
        return confirms;
    }

    List<Subscription> subscriptions() {
        return subscriptions;
    }

    void publisherAdded() {
        publishers++;
    }

    void publisherRemoved() {
        publishers--;
    }

    /** True once it has neither publishers nor subscriptions nor confirms to wait for: the connection lets it go. */
    boolean unused() {
        return publishers == 0 && subscriptions.isEmpty() && confirms.size() == 0;
    }

    /**
     * The connection no longer uses the stream: it stops listening. Subscriptions must have closed their readers.
     *
     * @return the confirms that were still waiting (they will never come)
     */
    int release() {
        if (released) {
            return 0;
        }
        released = true;
        log.removeListener(this);
        cancelWatch.run();
        return confirms.clear();
    }
}
