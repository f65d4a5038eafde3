package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.ManagementCommand;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.server.authz.Permission;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The streams a connection uses ({@link StreamUse}, one per stream while it has publishers or subscriptions there),
 * by name, and what ends a use: nothing of the connection needs it any more, the stream was deleted, or the user
 * lost the permission after a re-authentication. Owned by the connection's event loop.
 */
final class StreamUses {
    private final StreamConnectionHandler connection;
    private final Publishers publishers;
    private final Subscriptions subscriptions;
    private final Map<String, StreamUse> byName = new HashMap<>();

    StreamUses(StreamConnectionHandler connection, Publishers publishers, Subscriptions subscriptions) {
        this.connection = connection;
        this.publishers = publishers;
        this.subscriptions = subscriptions;
    }

    /** The connection's use of {@code queue}, made on first use. */
    StreamUse use(String name, StreamQueue queue) {
        StreamUse use = byName.get(name);
        if (use != null && use.queue() == queue) {
            return use;
        }
        if (use != null) {
            deleted(use); // a stream of that name gone, its deletion's news still on the way
        }
        use = new StreamUse(name, queue, StreamConnectionHandler.log(queue), connection);
        byName.put(name, use);
        return use;
    }

    /** Lets go of {@code use} once nothing of this connection needs it. */
    void releaseIfUnused(StreamUse use) {
        if (use.unused() && byName.get(use.name()) == use) {
            byName.remove(use.name());
            use.release();
        }
    }

    /**
     * The stream was deleted (by anyone): its publishers and subscriptions here go, and the client hears it
     * ({@code metadata_update}, 0x06, as RabbitMQ says it) when it had any and the connection is open.
     */
    void deleted(StreamUse use) {
        if (byName.get(use.name()) != use) {
            return;
        }
        boolean had = publishers.removeAll(use) | subscriptions.removeAll(use);
        byName.remove(use.name());
        connection.flow().answered(use.release());
        if (had && connection.isOpen()) {
            connection.respond(new ManagementCommand.MetadataUpdate(ResponseCode.STREAM_NOT_AVAILABLE, use.name()));
            connection.flushLater();
        }
    }

    /**
     * After a re-authentication: publishers that may no longer write and subscriptions that may no longer read go,
     * their streams announced as unavailable (RabbitMQ's {@code evaluate_state_after_secret_update}).
     */
    void permissionsChanged() {
        for (StreamUse use : List.copyOf(byName.values())) {
            boolean lost = false;
            for (StreamPublisher p : publishers.all()) {
                lost |= p.use() == use && connection.permission(Permission.WRITE, use.name()) != null;
            }
            for (Subscription s : subscriptions.all()) {
                lost |= s.use() == use && connection.permission(Permission.READ, use.name()) != null;
            }
            if (lost) {
                deleted(use);
            }
        }
    }

    /** The connection ends: its publishers, subscriptions and uses go. */
    void releaseAll() {
        publishers.clear();
        subscriptions.clear();
        for (StreamUse use : byName.values()) {
            use.release();
        }
        byName.clear();
    }
}
