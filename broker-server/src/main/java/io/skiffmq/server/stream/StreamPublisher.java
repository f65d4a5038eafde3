package io.skiffmq.server.stream;

import io.skiffmq.store.stream.TrackedPublisher;

/**
 * A publisher a connection declared: its id on the connection, the stream, and for deduplication its reference and
 * the log's {@link TrackedPublisher} for it. The counts and the deleted flag are the connection's event loop's;
 * {@link #tracked} is set and read on the stream's thread only (the declaration obtains it there, before any
 * publish of this publisher reaches that thread).
 */
final class StreamPublisher {
    private final int id;
    private final String reference;
    private final StreamUse use;
    /** The stream's thread's: set when the declaration went through it. */
    TrackedPublisher tracked;
    private boolean deleted;
    private long published;
    private long confirmed;
    private long errored;

    /** @param reference null for a publisher without deduplication */
    StreamPublisher(int id, String reference, StreamUse use) {
        this.id = id;
        this.reference = reference;
        this.use = use;
    }

    int id() {
        return id;
    }

    /** Null when the publisher has no reference. */
    String reference() {
        return reference;
    }

    StreamUse use() {
        return use;
    }

    String stream() {
        return use.name();
    }

    /** Deleted (by the client, or with its stream): its confirms in flight are dropped, as RabbitMQ drops them. */
    boolean deleted() {
        return deleted;
    }

    void delete() {
        deleted = true;
    }

    void published(int n) {
        published += n;
    }

    void confirmed(int n) {
        confirmed += n;
    }

    void errored(int n) {
        errored += n;
    }

    long publishedCount() {
        return published;
    }

    long confirmedCount() {
        return confirmed;
    }

    long erroredCount() {
        return errored;
    }
}
