package io.skiffmq.server;

import io.netty.util.concurrent.Future;

/**
 * A client connection of any protocol, as the {@link Broker}'s registry of open connections sees it: enough to
 * close it when the broker stops.
 */
public interface ClientConnection {
    /**
     * Closes the connection because the broker is stopping, telling the peer so in its protocol's terms. Called from
     * any thread; the work runs on the connection's event loop.
     *
     * @return done once the close is written
     */
    Future<?> closeForShutdown();
}
