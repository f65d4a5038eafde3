package io.skiffmq.core.queue;

/**
 * The page files of one queue, one per priority lane, made when a lane first needs one. The store gives one to
 * every queue it makes ({@link io.skiffmq.core.VirtualHostStore}); what is in them is not synced and is gone after
 * a restart: durable messages are also in the queue's {@link QueueLog}, which is what recovery reads. Owned by the
 * queue's thread; not thread-safe.
 */
public interface QueuePages {
    /** The page file of lane {@code lane}, made empty. */
    PageFile lane(int lane);

    /** Deletes every page file of the queue; none is used again. */
    void delete();

    /**
     * Any thread: the store's writes of paged messages are behind the disk, so publishers to a queue that pages are
     * held ({@link PublisherFlow}) rather than the queue's thread waiting for the disk. Never, by default.
     */
    default boolean writesBehind() {
        return false;
    }
}
