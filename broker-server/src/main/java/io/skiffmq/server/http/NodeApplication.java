package io.skiffmq.server.http;

/**
 * rabbitmqctl's stop_app and start_app on this node: the client listeners and connections, while the node (its
 * queues, definitions and this HTTP API) stays. Implemented by the broker's listener; safe from any thread.
 */
public interface NodeApplication {
    /** Closes the client listeners and every connection; nothing when already stopped. */
    void stop();

    /**
     * Binds the client listeners again; nothing when running.
     *
     * @throws IllegalStateException when the node is shutting down or a port cannot be bound
     */
    void start() throws InterruptedException;
}
