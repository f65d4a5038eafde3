package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.core.queue.QueueLog.Unreadable;
import io.skiffmq.core.queue.StoredMessage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * The durable messages of one virtual host. Every durable queue writes through its own {@link QueueLog} into one
 * shared {@link Journal}, so one sync confirms the writes of all of them. A message's location is that of its
 * record in the journal, from which a queue {@linkplain QueueLog#read reads it back} when it keeps only an index.
 *
 * <p>Space comes back by segments, oldest first (a segment may hold acks of messages in older ones, so deleting
 * out of order could bring acked messages back): the oldest closed segment is deleted once it holds no live
 * message, and when only a few of its messages are live ({@link #COMPACT_BELOW} of them) and it is
 * {@link #COMPACT_AFTER} segments behind the writer, its queues copy those messages forward so it can go. The
 * segment being written is left for a fresh one once it holds {@link #ROLL_DEAD_BYTES} and nothing live and the
 * journal has been idle for a maintenance pass ({@link IdleSegmentRoll}), so an idle, empty journal shrinks to almost
 * nothing.
 *
 * <p>Threads: {@link #recover} then {@link #start} on the starting thread; each {@link QueueLog} on its queue's
 * thread; reclamation on one maintenance thread of its own.
 */
public final class MessageStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MessageStore.class.getName());
    /** Compact a segment when fewer than this share of the messages written to it are live. */
    static final double COMPACT_BELOW = 0.25;
    /**
     * … and it is at least this many segments behind the one being written: 128 MiB at the default size, as two of
     * the 64 MiB segments of before, so a backlog drained in order is not copied forward any sooner.
     */
    static final int COMPACT_AFTER = 8;
    private static final long MAINTENANCE_MILLIS = 200;
    /** The segment being written is left for a new one once it holds this much, nothing live, and is idle. */
    static final long ROLL_DEAD_BYTES = 1 << 20;

    private final Journal journal;
    private final IdleSegmentRoll idleRoll;
    private final Map<Long, LongFunction<CompletableFuture<Integer>>> relocators = new ConcurrentHashMap<>();
    private final Map<Long, JournalQueueLog> logs = new ConcurrentHashMap<>();
    /** The journal replayed ends with a clean stop: {@link #start} voids it with a started record. */
    private boolean recoveredClean;
    private final ScheduledExecutorService maintenance = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "skiffmq-store-maintenance");
        t.setDaemon(true);
        return t;
    });

    /** The journal every durable queue of this store writes to (its counters, for metrics). */
    public Journal journal() {
        return journal;
    }

    public MessageStore(Path directory, Journal.SyncPolicy policy, long segmentBytes) {
        this(directory, policy, segmentBytes, Journal.DEFAULT_MAX_MESSAGE_BYTES);
    }

    /** @param maxMessageBytes the largest message a record holds (see {@link Journal}) */
    public MessageStore(Path directory, Journal.SyncPolicy policy, long segmentBytes, long maxMessageBytes) {
        this.journal = new Journal(directory, policy, segmentBytes, maxMessageBytes);
        this.idleRoll = new IdleSegmentRoll(journal, ROLL_DEAD_BYTES);
    }

    /** A message found live in the journal while replaying: where it is, not its bytes. */
    private static final class Live {
        final long location;
        long deliveryCount;
        /** Returns to its queue, {@link JournalRecord#NO_RETURNS} when the records kept none (its delivery count). */
        long returns = JournalRecord.NO_RETURNS;
        /** What the queue orders, expires and limits by, read from the message once at replay. */
        int priority;
        long ttl = -1;
        int bodySize;
        /** From the record (version 5), else unknown. */
        long expiresAt = StoredMessage.EXPIRY_UNKNOWN;
        /** A {@link RecordType#DELIVERED} record names it. */
        boolean delivered;
        /** Why it died, when a {@link RecordType#DEAD_LETTERING} record says it waits to be dead-lettered; else -1. */
        int deadLettering = -1;

        Live(long location, long deliveryCount) {
            this.location = location;
            this.deliveryCount = deliveryCount;
        }

        /** Reads priority, TTL and body size from a publish record's message (left as they are when unreadable). */
        Live read(JournalRecord.Read r) {
            if (r.version() >= RecordDescriptor.VERSION_5) {
                expiresAt = r.expiresAt();
            }
            bodySize = r.message().readableBytes();
            MessageFormat format = MessageFormat.ofTag(r.format());
            if (format != null) {
                try {
                    Message message = Message.readStored(format, r.message().retainedSlice(), true, r.exchange(),
                        r.routingKey());
                    priority = message.priority();
                    ttl = message.ttl();
                    bodySize = message.bodySize();
                    message.release();
                } catch (MalformedMessageException e) {
                    // the queue finds out when it reads the message back, and says so then
                }
            }
            return this;
        }
    }

    /**
     * Replays the journal: every message still live, by queue id, in sequence order, as an index only (its
     * message is null: the queue reads it when it needs it). Call once, after the logs of the durable queues are
     * made and before {@link #start}. Each message keeps its segment until its queue removes it; a message whose
     * queue has no log must be {@link #discard}ed.
     *
     * <p>No record is written when a message is delivered, so after a crash every message may have been: all come
     * back {@linkplain StoredMessage#deliveredBefore delivered before}, as RabbitMQ marks them after a dirty
     * recovery. After a clean stop (the journal ends with {@link RecordType#CLEAN_STOP}) only those its queue's
     * {@link RecordType#DELIVERED} records name do, as RabbitMQ keeps its queues' delivery marks in their recovery
     * terms at a graceful stop.
     */
    public Map<Long, List<StoredMessage>> recover() {
        long started = System.nanoTime();
        Map<Long, TreeMap<Long, Live>> queues = new HashMap<>();
        RecordType[] last = new RecordType[1];
        long records = journal.replay((r, location) -> {
            last[0] = r.type();
            switch (r.type()) {
                case PUBLISH -> {
                    // a later copy of the same message (compaction) replaces the earlier one
                    Live copy = new Live(location, r.deliveryCount()).read(r);
                    copy.returns = r.returns();
                    Live earlier = queues.computeIfAbsent(r.queueId(), q -> new TreeMap<>()).put(r.sequence(), copy);
                    copy.delivered = earlier != null && earlier.delivered;
                    copy.deadLettering = earlier == null ? -1 : earlier.deadLettering;
                }
                case DELIVERED -> {
                    TreeMap<Long, Live> queue = queues.get(r.queueId());
                    for (int i = 0; queue != null && i < r.rangeCount(); i++) {
                        long first = r.rangeFirst(i);
                        queue.subMap(first, first + r.rangeLength(i)).values().forEach(live -> live.delivered = true);
                    }
                }
                case CLEAN_STOP, STARTED -> { }
                case DEAD_LETTERING -> {
                    TreeMap<Long, Live> queue = queues.get(r.queueId());
                    Live live = queue == null ? null : queue.get(r.sequence());
                    if (live != null) {
                        live.deadLettering = r.reason();
                    }
                }
                case ACK, EXPIRE -> {
                    TreeMap<Long, Live> queue = queues.get(r.queueId());
                    if (queue != null) {
                        queue.remove(r.sequence());
                    }
                }
                case ACKS -> {
                    TreeMap<Long, Live> queue = queues.get(r.queueId());
                    for (int i = 0; queue != null && i < r.rangeCount(); i++) {
                        long first = r.rangeFirst(i);
                        queue.subMap(first, first + r.rangeLength(i)).clear();
                    }
                }
                case REQUEUE -> {
                    TreeMap<Long, Live> queue = queues.get(r.queueId());
                    Live live = queue == null ? null : queue.get(r.sequence());
                    if (live != null) {
                        live.deliveryCount = r.deliveryCount();
                        live.returns = r.returns();
                    }
                }
                case QUEUE_DELETED -> queues.remove(r.queueId());
            }
        });
        recoveredClean = last[0] == RecordType.CLEAN_STOP;
        Map<Long, List<StoredMessage>> recovered = new HashMap<>();
        long messages = 0;
        for (Map.Entry<Long, TreeMap<Long, Live>> queue : queues.entrySet()) {
            List<StoredMessage> list = new ArrayList<>(queue.getValue().size());
            JournalQueueLog log = logs.get(queue.getKey());
            for (Map.Entry<Long, Live> e : queue.getValue().entrySet()) {
                Live live = e.getValue();
                journal.recovered(live.location);
                if (log != null) {
                    log.bySegment.computeIfAbsent(Journal.segmentOf(live.location), s -> new long[1])[0]++;
                }
                list.add(new StoredMessage(e.getKey(), null, live.deliveryCount, live.location, live.priority,
                    live.ttl, live.bodySize, live.expiresAt,
                    !recoveredClean || live.delivered || live.deliveryCount > 0 || live.returns > 0, live.returns,
                    live.deadLettering < 0 || live.deadLettering >= DeadLetters.Reason.values().length ? null
                        : DeadLetters.Reason.values()[live.deadLettering]));
            }
            recovered.put(queue.getKey(), list);
            messages += list.size();
        }
        LOG.log(System.Logger.Level.INFO, "journal replayed: {0} records, {1} live messages in {2} queues, {3} ms, "
            + "{4}", records, messages, recovered.size(), (System.nanoTime() - started) / 1_000_000,
            recoveredClean ? "stopped cleanly" : "not stopped cleanly: every message counts as delivered before");
        return recovered;
    }

    /** A recovered message no queue takes (its queue is gone): releases its place in the journal. */
    public void discard(StoredMessage message) {
        journal.release(message.location(), 1);
    }

    /**
     * Starts writing and reclaiming. After a clean stop, first writes (and waits for) a {@link RecordType#STARTED}
     * record: messages may now be delivered without a record, so a crash from here on must not find the journal
     * clean.
     */
    public MessageStore start() {
        journal.start();
        if (recoveredClean) {
            appendBrokerRecord(RecordType.STARTED);
            try {
                journal.flush().get(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the journal started", e);
            } catch (Exception e) {
                throw new IllegalStateException("the journal's started record was not written", e);
            }
        }
        maintenance.scheduleWithFixedDelay(this::reclaim, MAINTENANCE_MILLIS, MAINTENANCE_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * The log of one durable queue.
     *
     * @param executor the queue's thread: its acks are gathered into one record per turn of it (see
     *        {@link JournalQueueLog})
     * @param relocator the queue's {@link io.skiffmq.core.queue.ClassicQueue#relocate}: asked to copy its
     *        messages before a location forward when their segment is compacted
     */
    public QueueLog log(long queueId, QueueExecutor executor, LongFunction<CompletableFuture<Integer>> relocator) {
        JournalQueueLog log = new JournalQueueLog(queueId, executor);
        relocators.put(queueId, relocator);
        logs.put(queueId, log);
        return log;
    }

    /** Syncs made so far (see {@link Journal#syncs}). */
    public long syncs() {
        return journal.syncs();
    }

    /** The journal's segments on disk, oldest first. */
    public List<Long> segments() {
        return journal.segments();
    }

    /** Deletes the oldest segments while they hold nothing live; compacts the oldest one that holds little. */
    void reclaim() {
        try {
            long writing = journal.writerSegment();
            boolean flushed = false;
            if (idleRoll.attempt()) {
                return; // the segment just left is deleted on the next pass
            }
            for (long segment : journal.segments()) {
                if (segment >= writing) {
                    return;
                }
                long live = journal.live(segment);
                if (live > 0) {
                    if (writing - segment >= COMPACT_AFTER && live < journal.written(segment) * COMPACT_BELOW) {
                        compact(segment);
                    }
                    return;
                }
                if (!flushed) {
                    // copies forward (and acks) written before now are durable before any original goes
                    journal.flush().get(30, TimeUnit.SECONDS);
                    flushed = true;
                    if (journal.live(segment) > 0) {
                        return; // an append that raced rollIfDead put a message in it: every append is in now
                    }
                }
                journal.deleteSegment(segment);
                LOG.log(System.Logger.Level.DEBUG, "journal segment {0} reclaimed", segment);
            }
        } catch (Exception e) {
            LOG.log(System.Logger.Level.ERROR, "journal reclamation failed; will retry", e);
        }
    }

    private void compact(long segment) throws Exception {
        List<CompletableFuture<Integer>> copies = new ArrayList<>();
        for (LongFunction<CompletableFuture<Integer>> relocator : relocators.values()) {
            copies.add(relocator.apply(Journal.location(segment + 1, 0)));
        }
        CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        int copied = copies.stream().mapToInt(CompletableFuture::join).sum();
        LOG.log(System.Logger.Level.DEBUG, "journal segment {0} compacted: {1} messages copied forward", segment, copied);
    }

    /** Appends a record about the broker rather than a queue (clean stop, started). */
    private void appendBrokerRecord(RecordType type) {
        ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RecordDescriptor.HEADER_LENGTH);
        JournalRecord.write(record, type, 0, 0, 0, 0);
        journal.append(record, null);
    }

    /**
     * Writes the acks each queue has gathered (on its thread), then what is pending, and closes the journal. When
     * every queue {@linkplain QueueLog#stopped stopped} cleanly, which it does when it closes, the last record says
     * so ({@link RecordType#CLEAN_STOP}).
     */
    @Override
    public void close() {
        maintenance.shutdownNow();
        boolean clean = false;
        try {
            maintenance.awaitTermination(10, TimeUnit.SECONDS);
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (JournalQueueLog log : logs.values()) {
                acks.add(log.writeAcksNow());
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            clean = logs.values().stream().allMatch(log -> log.stopped);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // a queue's thread is gone or stuck: its last acks are lost, so those messages come back (at least once)
            LOG.log(System.Logger.Level.WARNING, "acks of some queues not written before the journal closed", e);
        }
        if (clean) {
            try {
                appendBrokerRecord(RecordType.CLEAN_STOP);
            } catch (IllegalStateException e) {
                // the journal failed (it said so): the next start counts every message as delivered before
            }
        }
        journal.close();
    }

    /**
     * One queue's writes into the journal. Used only on the queue's thread (and by {@link #recover} before the
     * queue is used); {@link #bySegment} counts its live messages per segment, so deleting the queue releases
     * them all at once.
     *
     * <p>Acks are gathered, not written one by one: {@link #remove} adds the sequence to a range (consecutive
     * sequences, as a FIFO queue acks them, extend the last one), and the first ack of a batch asks the queue's
     * executor to {@link #writeAcks} behind the tasks already queued, so everything the queue settles in a turn
     * becomes one {@link RecordType#ACKS} record. An ack is not confirmed to anyone, so delaying it by a turn
     * costs no promise: a crash in between brings the message back, as one before any ack was written would.
     * The batch lives in two arrays reused from batch to batch; its buffer is made only to be written.
     */
    private final class JournalQueueLog implements QueueLog {
        /** Ranges per record at most (12 KiB of body): a purge of millions writes several records. */
        static final int MAX_ACK_RANGES = 1024;

        private final long queueId;
        private final QueueExecutor executor;
        private final Map<Long, long[]> bySegment = new HashMap<>();
        /** The count of the segment written last, so most writes skip the map lookup (and its boxing). */
        private long lastSegment = -1;
        private long[] lastCount;
        /** The acks gathered: {@link #ackRanges} ranges, from {@code ackFirsts[i]}, {@code ackCounts[i]} long. */
        private long[] ackFirsts = new long[16];
        private int[] ackCounts = new int[16];
        private int ackRanges;
        /**
         * True from the first ack of a batch until its record is appended (so always when {@link #ackRanges}
         * &gt; 0). Volatile, written twice per batch, so that {@link #close}, once the queues have stopped, can
         * skip a queue with nothing left to write without asking its thread, which may no longer run tasks.
         */
        private volatile boolean acksScheduled;
        private final Runnable writeAcks = this::writeAcks;
        /** The queue stopped cleanly and wrote which messages it had delivered ({@link #stopped}); read by close. */
        private volatile boolean stopped;

        JournalQueueLog(long queueId, QueueExecutor executor) {
            this.queueId = queueId;
            this.executor = executor;
        }

        private long write(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
                Runnable durable) {
            ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(
                RecordDescriptor.HEADER_LENGTH + 76 + message.storedSize());
            JournalRecord.writePublish(record, queueId, sequence, RecordDescriptor.FLAG_DURABLE, (int) deliveryCount,
                returns == deliveryCount ? JournalRecord.NO_RETURNS : returns, expiresAt, message);
            long location = journal.append(record, true, durable);
            long segment = Journal.segmentOf(location);
            if (segment != lastSegment) {
                lastCount = bySegment.computeIfAbsent(segment, s -> new long[1]);
                lastSegment = segment;
            }
            lastCount[0]++;
            return location;
        }

        private void release(long location) {
            long segment = Journal.segmentOf(location);
            long[] count = segment == lastSegment ? lastCount : bySegment.get(segment);
            if (--count[0] == 0) {
                bySegment.remove(segment);
                if (segment == lastSegment) {
                    lastSegment = -1; // the next write to it starts a new count in the map
                }
            }
            journal.release(location, 1);
        }

        private void append(RecordType type, long sequence, long deliveryCount) {
            ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RecordDescriptor.HEADER_LENGTH);
            JournalRecord.write(record, type, queueId, sequence, 0, (int) deliveryCount);
            appendQuietly(record);
        }

        private void appendQuietly(ByteBuf record) {
            try {
                journal.append(record, null);
            } catch (IllegalStateException e) {
                // the journal failed (it said so, loudly) or is closing: the queue goes on in memory, and after a
                // restart these messages come back (at least once) rather than the queue losing track of them now
            }
        }

        @Override
        public long publish(long sequence, Message message, long deliveryCount, long expiresAt, Runnable durable) {
            return write(sequence, message, deliveryCount, deliveryCount, expiresAt, durable);
        }

        @Override
        public long publish(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
                Runnable durable) {
            return write(sequence, message, deliveryCount, returns, expiresAt, durable);
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long expiresAt, long location) {
            return relocate(sequence, message, deliveryCount, deliveryCount, expiresAt, location);
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
                long location) {
            long moved = write(sequence, message, deliveryCount, returns, expiresAt, null);
            release(location);
            return moved;
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount) {
            append(RecordType.REQUEUE, sequence, deliveryCount);
        }

        @Override
        public void deadLettering(long sequence, long location, DeadLetters.Reason reason) {
            ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RecordDescriptor.HEADER_LENGTH + 1);
            JournalRecord.writeDeadLettering(record, queueId, sequence, reason.ordinal());
            appendQuietly(record);
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount, long returns) {
            if (returns == deliveryCount) {
                requeue(sequence, location, deliveryCount);
                return;
            }
            ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RecordDescriptor.HEADER_LENGTH + 4);
            JournalRecord.writeRequeue(record, queueId, sequence, (int) deliveryCount, returns);
            appendQuietly(record);
        }

        @Override
        public void whenWritten(Runnable action) {
            writeAcks();
            journal.flush().thenRun(action);
        }

        @Override
        public boolean isWritten(long location) {
            return journal.isWritten(location);
        }

        @Override
        public Message read(long sequence, long location) {
            ByteBuf record;
            try {
                record = journal.read(location);
            } catch (IllegalStateException e) {
                throw new Unreadable(e.getMessage(), e); // no record there: its segment is gone
            }
            try {
                JournalRecord.Read r = JournalRecord.read(record);
                if (r.type() != RecordType.PUBLISH || r.queueId() != queueId || r.sequence() != sequence) {
                    throw new Unreadable("journal record at " + location + " is " + r.type() + " of queue "
                        + r.queueId() + "/" + r.sequence() + ", not the message " + queueId + "/" + sequence, null);
                }
                MessageFormat format = MessageFormat.ofTag(r.format());
                if (format == null) {
                    throw new Unreadable("journal record at " + location + " holds a message of unknown format "
                        + r.format(), null);
                }
                return Message.readStored(format, r.message(), true, r.exchange(), r.routingKey(),
                    r.version() < RecordDescriptor.VERSION_4);
            } catch (JournalRecord.Corrupt | MalformedMessageException e) {
                throw new Unreadable("journal record at " + location + " is damaged: " + e.getMessage(), e);
            }
        }

        @Override
        public void remove(long sequence, long location) {
            int last = ackRanges - 1;
            if (last >= 0 && ackFirsts[last] + ackCounts[last] == sequence && ackCounts[last] < Integer.MAX_VALUE) {
                ackCounts[last]++;
            } else {
                if (ackRanges == MAX_ACK_RANGES) {
                    writeAcks();
                } else if (ackRanges == ackFirsts.length) {
                    ackFirsts = Arrays.copyOf(ackFirsts, ackRanges * 2);
                    ackCounts = Arrays.copyOf(ackCounts, ackRanges * 2);
                }
                ackFirsts[ackRanges] = sequence;
                ackCounts[ackRanges++] = 1;
            }
            if (!acksScheduled) {
                acksScheduled = true;
                try {
                    executor.execute(writeAcks);
                } catch (RuntimeException e) {
                    writeAcks(); // the executor is shutting down: write them now rather than never
                }
            }
            release(location);
        }

        /** Has the queue's thread write the acks it gathered, at once if this is that thread. */
        CompletableFuture<Void> writeAcksNow() {
            CompletableFuture<Void> written = new CompletableFuture<>();
            if (!acksScheduled) {
                written.complete(null);
                return written;
            }
            try {
                executor.run(() -> {
                    writeAcks();
                    written.complete(null);
                });
            } catch (RuntimeException e) {
                written.completeExceptionally(e); // the executor is shut down
            }
            return written;
        }

        /** Writes the acks gathered as one record; runs on the queue's thread, after the tasks that gathered them. */
        private void writeAcks() {
            if (ackRanges > 0) {
                appendRanges(RecordType.ACKS, ackFirsts, ackCounts, ackRanges);
                ackRanges = 0;
            }
            // only once the record is in the journal: close() skips this queue on seeing it false
            acksScheduled = false;
        }

        private void appendRanges(RecordType type, long[] firsts, int[] counts, int ranges) {
            ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RecordDescriptor.HEADER_LENGTH
                + ranges * RecordDescriptor.ACK_RANGE_LENGTH);
            JournalRecord.writeRanges(record, type, queueId, firsts, counts, ranges);
            appendQuietly(record);
        }

        /**
         * The sequences, ascending, as {@link RecordType#DELIVERED} records of at most {@link #MAX_ACK_RANGES}
         * ranges; then the acks gathered. Nothing is written for the queue afterwards.
         */
        @Override
        public void stopped(long[] deliveredBefore, int count) {
            long[] firsts = new long[Math.min(count, MAX_ACK_RANGES)];
            int[] lengths = new int[firsts.length];
            int ranges = 0;
            for (int i = 0; i < count; i++) {
                long sequence = deliveredBefore[i];
                if (ranges > 0 && firsts[ranges - 1] + lengths[ranges - 1] == sequence) {
                    lengths[ranges - 1]++;
                    continue;
                }
                if (ranges == firsts.length) {
                    appendRanges(RecordType.DELIVERED, firsts, lengths, ranges);
                    ranges = 0;
                }
                firsts[ranges] = sequence;
                lengths[ranges++] = 1;
            }
            if (ranges > 0) {
                appendRanges(RecordType.DELIVERED, firsts, lengths, ranges);
            }
            writeAcks();
            stopped = true;
        }

        @Override
        public void deleted() {
            relocators.remove(queueId);
            logs.remove(queueId);
            ackRanges = 0; // QUEUE_DELETED says it for all of them
            append(RecordType.QUEUE_DELETED, 0, 0);
            for (Map.Entry<Long, long[]> e : bySegment.entrySet()) {
                journal.release(Journal.location(e.getKey(), 0), e.getValue()[0]);
            }
            bySegment.clear();
            lastSegment = -1;
        }
    }
}
