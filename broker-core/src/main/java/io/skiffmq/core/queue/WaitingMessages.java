package io.skiffmq.core.queue;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * A queue's messages waiting for a consumer, in the order they go out: by priority lane, highest first (one lane
 * unless the queue has {@code x-max-priority}), and within a lane arrivals in order, with messages given back
 * (released, modified) at their original position, ahead of later arrivals. Keeps the bytes of those held in memory
 * (a paged-out entry has no message and counts nothing) and the body bytes of all of them ({@code x-max-length-bytes}).
 *
 * <p>A quorum queue's are {@link #weighted(QueuePages, long) weighted}, as RabbitMQ 4.0's {@code rabbit_fifo}
 * orders them: messages given back wait apart, in the order they came back, and go out before any other
 * ({@code rabbit_fifo}'s {@code returns}); the others wait in two lanes, high (priority above 4) and normal, served
 * as {@code rabbit_fifo_q} serves them: every third message taken from the lanes (its {@code dequeue_counter} at
 * {@link #WEIGHT}) is the older of the two lanes' heads, the others the high lane's head while it has one. Expiry
 * looks at the next to go out only, as {@code rabbit_fifo} does.
 *
 * <p>With {@link QueuePages}, each lane may have a {@link PagedTail}: arrivals {@link #page paged} while the queue
 * is over its memory limit, after every in-memory arrival of the lane, with no entry object in memory. The tail is
 * read back in order, up to {@link #READ_BATCH} at a time and never past the limit but for the one a lane's head
 * needs, while the {@link #footprint} is under the limit ({@link #readBack}), and whenever the lane has no arrival
 * left in memory: so its head is always in memory, and
 * expiry, priorities and given-back messages work on in-memory entries only. Sizes and body bytes count the tails.
 * Owned by the queue's thread.
 */
final class WaitingMessages {
    private static final System.Logger LOG = System.getLogger(WaitingMessages.class.getName());
    /**
     * Heap bytes a waiting message held in memory costs beyond {@link io.skiffmq.core.message.Message#size()}: its
     * entry, the message and buffer objects, the deque slot. {@code QueueMemory} (benchmarks) measured 421 bytes
     * per queued 12-byte AMQP 1.0 message whose size is 21 (docs/benchmarks.md). It makes the memory limit bound
     * the heap for small messages, which are mostly overhead.
     */
    static final int ENTRY_OVERHEAD = 400;
    /**
     * Messages read back from a tail at a time, at most: enough to amortise a file read for small messages. A batch
     * also ends at the memory limit, so large ones (256 of 1 MiB would be 256 MiB of heap) stay near it.
     */
    static final int READ_BATCH = 256;
    /**
     * {@code rabbit_fifo_q}'s {@code ?WEIGHT}: of a weighted queue's takes from its lanes, those with
     * {@link #dequeues} at this value go to the older head; the count then starts again at 0.
     */
    static final int WEIGHT = 2;
    /** A weighted queue's lane for messages of priority above 4 ({@code rabbit_fifo}'s {@code priority_tag/1}). */
    static final int HIGH = 1;

    /** By priority: lane {@code i} holds the entries of priority {@code i}. */
    private final Lane[] lanes;
    /** Where tails are paged; null: the queue never pages this way. */
    private final QueuePages pages;
    /** The {@link #footprint} tails are read back to, and past which arrivals are paged. */
    private final long memoryLimit;
    private int size;
    /** Messages in the lanes' tails (counted in {@link #size} too). */
    private int paged;
    private long bytes;
    private long bodyBytes;
    /** Entries given back so far ({@link #putBack}): a selector consumer looks at given-back ones when it grew. */
    private long putBacks;
    /**
     * Counts the changes that may give a selector consumer something new to look at: arrivals, given-back entries,
     * tails read back, and a lane's last in-memory entry leaving while its tail waits (its head comes back next).
     */
    private long changes;
    /** See {@link #deliverableThrough(long)}. */
    private long deliverableThrough = Long.MAX_VALUE;
    /** Lanes served 2:1 rather than strictly, with given-back messages apart (a quorum queue's, above). */
    private final boolean weighted;
    /** A weighted queue's given-back messages, in the order they came back; null for a strict one. */
    private final ArrayDeque<QueueEntry> returns;
    /** A weighted queue's takes from its lanes, counted 0 to {@link #WEIGHT} and round ({@code dequeue_counter}). */
    private int dequeues;
    /**
     * The sequence of the last entry a weighted queue took (-1: none), whether from {@link #returns}, and
     * {@link #dequeues} before it: what {@link #giveBack} restores.
     */
    private long lastTaken = -1;
    private boolean lastFromReturns;
    private int dequeuesBefore;

    /** @param maxPriority the highest priority told apart (0: a single lane) */
    WaitingMessages(int maxPriority) {
        this(maxPriority, null, Long.MAX_VALUE);
    }

    /**
     * @param pages where lanes page their tails; null for none
     * @param memoryLimit the footprint past which arrivals are paged, and up to which tails are read back
     */
    WaitingMessages(int maxPriority, QueuePages pages, long memoryLimit) {
        this(maxPriority, pages, memoryLimit, false);
    }

    /** A quorum queue's: two lanes served 2:1, and given-back messages first (see above). */
    static WaitingMessages weighted(QueuePages pages, long memoryLimit) {
        return new WaitingMessages(HIGH, pages, memoryLimit, true);
    }

    private WaitingMessages(int maxPriority, QueuePages pages, long memoryLimit, boolean weighted) {
        this.pages = pages;
        this.memoryLimit = memoryLimit;
        this.weighted = weighted;
        this.returns = weighted ? new ArrayDeque<>() : null;
        lanes = new Lane[maxPriority + 1];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane(i);
        }
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Bytes of the waiting messages held in memory. */
    long bytes() {
        return bytes;
    }

    /** Body bytes of every waiting message, in memory or not. */
    long bodyBytes() {
        return bodyBytes;
    }

    /** True when arrivals past the memory limit go to paged tails. */
    boolean pagesTails() {
        return pages != null;
    }

    /** Waiting messages in the lanes' paged tails: no entry of theirs is in memory. */
    int paged() {
        return paged;
    }

    /** What the waiting entries in memory cost the heap, about: their messages' bytes and each entry's overhead. */
    long footprint() {
        return bytes + (long) (size - paged) * ENTRY_OVERHEAD;
    }

    /**
     * True when an arrival in lane {@code priority} must go to its tail: the lane has one already (it goes after
     * it), or the queue is at its memory limit.
     */
    boolean mustPage(int priority) {
        if (pages == null) {
            return false;
        }
        PagedTail tail = lanes[priority].tail;
        return tail != null && tail.count() > 0 || footprint() >= memoryLimit;
    }

    /**
     * A new arrival goes to the tail of its lane, after every other arrival of its priority: its message is written
     * and released, and the entry is not kept.
     *
     * @return false when it could not be written (logged): the entry is unchanged, and the caller keeps it in memory
     */
    boolean page(QueueEntry entry) {
        Lane lane = lanes[entry.priority()];
        try {
            if (lane.tail == null) {
                lane.tail = new PagedTail(pages.lane(entry.priority()));
            }
            lane.tail.append(entry);
            changes++;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "a message could not be paged; it stays in memory", e);
            return false;
        }
        size++;
        paged++;
        bodyBytes += entry.bodySize;
        return true;
    }

    /**
     * Reads tails back, highest priority first, while the footprint is under the memory limit: the next messages
     * are in memory before consumers ask for them.
     */
    void readBack() {
        if (paged == 0) {
            return;
        }
        for (int i = lanes.length - 1; i >= 0 && footprint() < memoryLimit; i--) {
            Lane lane = lanes[i];
            while (lane.tail != null && lane.tail.count() > 0 && footprint() < memoryLimit) {
                lane.readBatch();
            }
        }
    }

    /**
     * Copies the logged messages of the tails that lie before {@code before} forward in {@code log} (journal
     * compaction); returns how many.
     */
    int relocateTails(long before, QueueLog log) {
        int copied = 0;
        for (Lane lane : lanes) {
            if (lane.tail != null) {
                copied += lane.tail.relocate(before, log);
            }
        }
        return copied;
    }

    /** Deletes the lanes' page files, which are not used again (the queue is deleted or closed). */
    void deletePages() {
        for (Lane lane : lanes) {
            if (lane.tail != null) {
                lane.tail.delete();
            }
        }
        if (pages != null) {
            pages.delete();
        }
    }

    /** A message held in memory by a waiting entry was read back ({@code delta} > 0) or let go (< 0). */
    void memoryChanged(long delta) {
        bytes += delta;
    }

    /** A new (or recovered) entry, after every other arrival of its priority. */
    void arrive(QueueEntry entry) {
        changes++;
        lanes[entry.priority()].arrived.addLast(entry);
        count(entry, 1);
    }

    /** Takes back the last arrival (the log refused it). */
    void cancelArrival(QueueEntry entry) {
        lanes[entry.priority()].arrived.removeLastOccurrence(entry);
        count(entry, -1);
    }

    /** True for a quorum queue's lanes, served 2:1 (see above). */
    boolean weighted() {
        return weighted;
    }

    /**
     * A taken entry goes back among the waiting ones (released, modified): at its position, or for a weighted
     * queue after the others given back, ahead of both lanes.
     */
    void putBack(QueueEntry entry) {
        if (weighted) {
            putBacks++;
            changes++;
            returns.addLast(entry);
            count(entry, 1);
        } else {
            putBackInLane(entry);
        }
    }

    /**
     * An entry just taken that was not handed out (the consumer's channel is at its limit, its message could not
     * be read back now) goes back to where it was, as if it had not been taken: a weighted queue's count of takes
     * is as it was too.
     */
    void giveBack(QueueEntry entry) {
        if (weighted && entry.sequence == lastTaken) {
            lastTaken = -1;
            if (lastFromReturns) {
                putBacks++;
                changes++;
                returns.addFirst(entry);
                count(entry, 1);
                return;
            }
            dequeues = dequeuesBefore;
        }
        putBackInLane(entry);
    }

    private void putBackInLane(QueueEntry entry) {
        putBacks++;
        changes++;
        lanes[entry.priority()].returned.add(entry);
        count(entry, 1);
    }

    /**
     * Delivers only entries of sequences up to {@code sequence} (a log that delivers committed messages only,
     * {@link QueueLog#deliversCommitted}); {@code Long.MAX_VALUE}, the start, for every entry. A selector consumer
     * that found nothing looks again.
     */
    void deliverableThrough(long sequence) {
        deliverableThrough = sequence;
        changes++;
    }

    /** Whether {@code entry} may be delivered now: see {@link #deliverableThrough(long)}. */
    boolean deliverable(QueueEntry entry) {
        return deliverable(entry.sequence);
    }

    boolean deliverable(long sequence) {
        return sequence <= deliverableThrough;
    }

    /** Whether the entry that goes out next must wait to be committed (nothing to look at unless some may). */
    boolean headUndeliverable() {
        if (deliverableThrough == Long.MAX_VALUE) {
            return false;
        }
        QueueEntry head = head();
        return head != null && !deliverable(head);
    }

    /** The entry that goes out next, left in place; null when none. */
    QueueEntry head() {
        if (weighted) {
            QueueEntry back = returns.peekFirst();
            return back != null ? back : lanes[nextLane()].oldest();
        }
        for (int i = lanes.length - 1; i >= 0; i--) {
            QueueEntry head = lanes[i].oldest();
            if (head != null) {
                return head;
            }
        }
        return null;
    }

    /** Removes and returns {@link #head()}. */
    QueueEntry removeHead() {
        if (weighted) {
            return removeWeightedHead();
        }
        for (int i = lanes.length - 1; i >= 0; i--) {
            QueueEntry head = removeOldest(lanes[i]);
            if (head != null) {
                return head;
            }
        }
        return null;
    }

    private QueueEntry removeWeightedHead() {
        QueueEntry back = returns.pollFirst();
        if (back != null) {
            count(back, -1);
            taken(back, true);
            return back;
        }
        QueueEntry head = removeOldest(lanes[nextLane()]);
        if (head != null) {
            taken(head, false);
            dequeuesBefore = dequeues;
            dequeues = dequeues == WEIGHT ? 0 : dequeues + 1;
        }
        return head;
    }

    private void taken(QueueEntry entry, boolean fromReturns) {
        lastTaken = entry.sequence;
        lastFromReturns = fromReturns;
    }

    /**
     * The weighted lane served next, as {@code rabbit_fifo_q:next/1}: the high lane while it has a head, but when
     * {@link #dequeues} is at {@link #WEIGHT} and the normal lane's head is older (sequences are arrival order, as
     * {@code rabbit_fifo}'s Raft indexes are), the normal lane. A lane without one is never chosen over one with.
     */
    private int nextLane() {
        QueueEntry high = lanes[HIGH].oldest();
        if (high == null) {
            return 0;
        }
        if (dequeues != WEIGHT) {
            return HIGH;
        }
        QueueEntry normal = lanes[0].oldest();
        return normal != null && normal.sequence < high.sequence ? 0 : HIGH;
    }

    /** See {@link #changes}: a selector consumer that found nothing at one count finds nothing until it moves. */
    long changes() {
        return changes;
    }

    /**
     * Removes and returns the first waiting entry, in the order they go out, that {@code scan} wants (a selector
     * consumer's next message), leaving the others in place and in order. Per lane, given-back entries are all
     * looked at (there are few), arrivals from just after the consumer's cursor ({@link SelectiveDispatch}): those up
     * to it were looked at before and are not wanted; given-back ones only when some were given back since the
     * consumer last found none it wanted among them (they are not bounded by the budget). An arrival paged out to the log is read back to be looked at
     * ({@link SelectiveDispatch.Scan#wants}); a given-back entry only when in memory; paged tails are not read beyond
     * what keeps each lane's head in memory (they come back as the head drains). A weighted queue's given-back
     * entries apart are looked at first, in the order they came back, and its lanes strictly, high first.
     *
     * @return the entry, or null when none is wanted (or the scan ran out of budget: {@link SelectiveDispatch.Scan})
     */
    QueueEntry removeFirstWanted(SelectiveDispatch.Scan scan) {
        boolean lookAtReturned = scan.returnedSeen() != putBacks;
        if (weighted && lookAtReturned) {
            for (java.util.Iterator<QueueEntry> it = returns.iterator(); it.hasNext() && !scan.exhausted(); ) {
                QueueEntry e = it.next();
                if (e.message != null && scan.wants(e)) {
                    it.remove();
                    count(e, -1);
                    taken(e, true);
                    return e;
                }
            }
        }
        for (int i = lanes.length - 1; i >= 0 && !scan.exhausted(); i--) {
            Lane lane = lanes[i];
            QueueEntry back = null;
            if (lookAtReturned) {
                for (QueueEntry e : lane.returned) {
                    if ((back == null || e.sequence < back.sequence) && e.message != null && scan.wants(e)) {
                        back = e;
                    }
                }
            }
            if (lane.arrived.isEmpty() && lane.tail != null && lane.tail.count() > 0) {
                lane.readBatch(); // the head of a lane is always in memory, for selector consumers too
            }
            long cursor = scan.cursor(i);
            boolean before = true; // every arrival older than the given-back one wanted was looked at
            for (java.util.Iterator<QueueEntry> it = lane.arrived.iterator(); it.hasNext(); ) {
                QueueEntry e = it.next();
                if (back != null && e.sequence > back.sequence) {
                    break;
                }
                if (e.sequence <= cursor) {
                    continue;
                }
                if (scan.exhausted()) {
                    before = false;
                    break;
                }
                if (scan.wants(e)) {
                    it.remove();
                    count(e, -1);
                    lastTaken = -1; // given back into its lane's place
                    return e;
                }
                scan.advance(i, e.sequence);
            }
            if (back != null) {
                if (!before) {
                    return null; // an older arrival may be wanted: it goes first, next time
                }
                lane.returned.remove(back);
                count(back, -1);
                lastTaken = -1;
                return back;
            }
        }
        if (!scan.exhausted()) {
            scan.returnedSeen(putBacks); // nothing given back so far is wanted: not looked at again until more is
        }
        return null;
    }

    /**
     * Removes the entries at the head of each lane that expired by {@code now} (RabbitMQ expires at the head only:
     * a message behind one that lives longer waits for it), handing each to {@code expired}.
     */
    void expireHeads(long now, Consumer<QueueEntry> expired) {
        if (weighted) {
            // rabbit_fifo expires the next message to go out, while it has expired (expire_msgs/4)
            QueueEntry head;
            while ((head = head()) != null && head.expiresAt() <= now) {
                expired.accept(removeHead());
            }
            return;
        }
        for (Lane lane : lanes) {
            QueueEntry head;
            while ((head = lane.oldest()) != null && head.expiresAt() <= now) {
                expired.accept(removeOldest(lane));
            }
        }
    }

    /**
     * The earliest expiry among the lanes' heads, {@link Long#MAX_VALUE} when none expires; a weighted queue's,
     * that of the next to go out.
     */
    long nextHeadExpiry() {
        if (weighted) {
            QueueEntry head = head();
            return head == null ? Long.MAX_VALUE : head.expiresAt();
        }
        long next = Long.MAX_VALUE;
        for (Lane lane : lanes) {
            QueueEntry head = lane.oldest();
            if (head != null) {
                next = Math.min(next, head.expiresAt());
            }
        }
        return next;
    }

    private QueueEntry removeOldest(Lane lane) {
        QueueEntry oldest = lane.oldest();
        if (oldest != null) {
            if (oldest == lane.returned.peek()) {
                lane.returned.poll();
            } else {
                lane.arrived.pollFirst();
                if (lane.arrived.isEmpty() && lane.tail != null && lane.tail.count() > 0) {
                    changes++;
                }
            }
            count(oldest, -1);
        }
        return oldest;
    }

    /** Every waiting entry, left in place. */
    void forEach(Consumer<QueueEntry> action) {
        if (weighted) {
            returns.forEach(action);
        }
        for (Lane lane : lanes) {
            lane.arrived.forEach(action);
            lane.returned.forEach(action);
        }
    }

    /**
     * Removes every waiting entry, handing each to {@code action}, and drops the tails whole: {@code pagedRemoved}
     * (may be null) hears each paged message that the log holds. Returns how many there were.
     */
    int removeAll(Consumer<QueueEntry> action, PageFile.Removed pagedRemoved) {
        int count = size;
        for (Lane lane : lanes) {
            if (lane.tail != null) {
                lane.tail.clear(pagedRemoved);
            }
        }
        paged = 0;
        if (weighted) {
            returns.forEach(e -> e.queued = false);
        }
        for (Lane lane : lanes) {
            lane.arrived.forEach(e -> e.queued = false);
            lane.returned.forEach(e -> e.queued = false);
        }
        if (weighted) {
            returns.forEach(action);
            returns.clear();
        }
        for (Lane lane : lanes) {
            lane.arrived.forEach(action);
            lane.returned.forEach(action);
            lane.arrived.clear();
            lane.returned.clear();
        }
        size = 0;
        bytes = 0;
        bodyBytes = 0;
        return count;
    }

    private void count(QueueEntry entry, int sign) {
        entry.queued = sign > 0;
        size += sign;
        bodyBytes += sign * (long) entry.bodySize;
        if (entry.message != null) {
            bytes += sign * (long) entry.message.size();
        }
    }

    /** The entries of one priority. */
    private final class Lane {
        final int priority;
        final ArrayDeque<QueueEntry> arrived = new ArrayDeque<>();
        /** Messages given back, by original position; always older than the head of {@link #arrived}. */
        final PriorityQueue<QueueEntry> returned = new PriorityQueue<>(Comparator.comparingLong(e -> e.sequence));
        /** Arrivals after every one in {@link #arrived}, on disk; null until the lane first pages. */
        PagedTail tail;

        Lane(int priority) {
            this.priority = priority;
        }

        /**
         * Reads up to {@link #READ_BATCH} messages of the tail back into {@link #arrived}: at least one, and no more
         * once the footprint reaches the memory limit.
         */
        void readBatch() {
            changes++;
            for (int i = 0; i < READ_BATCH && tail.count() > 0 && (i == 0 || footprint() < memoryLimit); i++) {
                QueueEntry entry;
                try {
                    entry = tail.next(priority);
                } catch (RuntimeException e) {
                    // the page file failed us: what is left of the tail cannot come back; durable ones are still
                    // in the log, and come back after a restart
                    int lost = tail.count();
                    LOG.log(System.Logger.Level.ERROR, "{0} paged messages are lost: their page file cannot be "
                        + "read back", lost, e);
                    size -= lost;
                    paged -= lost;
                    bodyBytes -= tail.bodyBytes();
                    try {
                        tail.clear(null);
                    } catch (RuntimeException again) {
                        tail = null; // a new file next time this lane pages
                    }
                    return;
                }
                paged--;
                entry.queued = true;
                bytes += entry.message.size();
                arrived.addLast(entry);
            }
        }

        QueueEntry oldest() {
            if (arrived.isEmpty() && tail != null && tail.count() > 0) {
                readBatch(); // the head of a lane is always in memory
            }
            QueueEntry back = returned.peek();
            QueueEntry next = arrived.peekFirst();
            return back != null && (next == null || back.sequence < next.sequence) ? back : next;
        }
    }
}
