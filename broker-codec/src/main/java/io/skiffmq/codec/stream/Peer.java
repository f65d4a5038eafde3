package io.skiffmq.codec.stream;

/** The two ends of a stream protocol connection: which one sends a frame decides which keys it may carry. */
public enum Peer {
    CLIENT,
    SERVER;

    /** The other end. */
    public Peer other() {
        return this == CLIENT ? SERVER : CLIENT;
    }
}
