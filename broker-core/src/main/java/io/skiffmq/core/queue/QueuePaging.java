package io.skiffmq.core.queue;

import java.util.ArrayDeque;

/**
 * Paging a queue's durable messages out to its {@link QueueLog} when it has no page files ({@link QueuePages}):
 * messages that arrived over the memory limit let go of their bytes once the log has written them (their entry
 * stays), and are read back from the log when dispatched. Messages recovered at start are paged out from the first.
 * Paged tails, when the queue has page files, are {@link WaitingMessages}' business.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}.
 */
final class QueuePaging {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    /** What {@link #pageIn} did. */
    static final int LOADED = 0;
    static final int LOST = 1;
    static final int NOT_NOW = 2;
    private final String name;
    /** Null for a queue that keeps nothing on disk: nothing is paged to it. */
    private final QueueLog log;
    private final WaitingMessages waiting;
    private final long memoryLimit;
    /** Entries that arrived over the memory limit, oldest first: paged out once written to the log. */
    private final ArrayDeque<QueueEntry> candidates = new ArrayDeque<>();

    QueuePaging(String name, QueueLog log, WaitingMessages waiting, long memoryLimit) {
        this.name = name;
        this.log = log;
        this.waiting = waiting;
        this.memoryLimit = memoryLimit;
    }

    /** A durable arrival, just given to the log: paged out once written, when memory is over the limit. */
    void arrived(QueueEntry entry) {
        if (!waiting.pagesTails() && waiting.bytes() > memoryLimit) {
            candidates.addLast(entry); // no pages: paged out to the log once written, entry kept
        }
    }

    boolean hasCandidates() {
        return !candidates.isEmpty();
    }

    /** The waiting messages are gone: none is to be paged out. */
    void clear() {
        candidates.clear();
    }

    /** Lets go of the bytes of waiting messages over the memory limit that the log can give back. */
    void pageOut() {
        for (QueueEntry entry; (entry = candidates.peekFirst()) != null; ) {
            if (entry.queued && entry.message != null) {
                if (waiting.bytes() <= memoryLimit || !log.isWritten(entry.location())) {
                    return;
                }
                waiting.memoryChanged(-entry.message.size());
                entry.message.release();
                entry.message = null;
            }
            candidates.pollFirst();
        }
    }

    /**
     * Reads a paged-out message back from the log, if it was paged out.
     *
     * @return {@link #LOADED}; {@link #LOST} when the log holds no good copy (damaged disk), so the message is
     *         dropped, loudly, rather than blocking the queue behind it; {@link #NOT_NOW} when reading failed in a
     *         way a later attempt may get past: the entry is back in its place
     */
    int pageIn(QueueEntry entry) {
        if (entry.message != null) {
            return LOADED;
        }
        try {
            entry.message = log.read(entry.sequence, entry.location());
            return LOADED;
        } catch (QueueLog.Unreadable e) {
            LOG.log(System.Logger.Level.ERROR, "queue ''{0}'': message {1} is lost, the log holds no good copy: {2}",
                name, entry.sequence, e.getMessage());
            log.remove(entry.sequence, entry.location());
            return LOST;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': message {1} cannot be read back now; dispatch "
                + "resumes with the next publish, settlement or credit", name, entry.sequence, e);
            waiting.giveBack(entry);
            return NOT_NOW;
        }
    }

    /**
     * Copies one entry forward in the log when its location is before {@code before} (see {@link QueueLog#relocate});
     * a paged-out one is back in memory until the copy is written, then paged out again. True when it copied.
     */
    boolean relocate(QueueEntry entry, long before) {
        if (entry.location() < 0 || entry.location() >= before) {
            return false;
        }
        if (entry.message == null) {
            entry.message = log.read(entry.sequence, entry.location());
            waiting.memoryChanged(entry.message.size());
            candidates.addLast(entry);
        }
        entry.location(log.relocate(entry.sequence, entry.message, entry.deliveryCount, entry.returns,
            entry.expiresAt(), entry.location()));
        return true;
    }
}
