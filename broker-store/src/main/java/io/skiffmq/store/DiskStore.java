package io.skiffmq.store;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.VirtualHostStore;
import io.skiffmq.core.definitions.DefinitionChange.PolicySet;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeleted;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.StreamArguments;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.store.definitions.ChangeLog;
import io.skiffmq.store.definitions.LegacyDefinitions;
import io.skiffmq.store.definitions.VhostReplica;
import io.skiffmq.store.stream.StreamLogConfig;
import io.skiffmq.store.stream.StreamLogStore;
import io.skiffmq.store.stream.StreamSyncer;
import io.skiffmq.core.queue.StoredMessage;
import io.skiffmq.core.routing.Binding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.List;
import java.util.Map;

/**
 * A virtual host's durable state on disk, in its own directory: {@code definitions.snapshot} and
 * {@code definitions.log} (its exchanges, queues and bindings as a {@link ChangeLog}; an older broker's
 * {@code definitions.amqp} is migrated on the first start), {@code journal/} ({@link MessageStore}) and {@code streams/} (a stream log per stream, named by its queue id:
 * {@link StreamLogStore}); and {@code paging/} ({@link PageStore}), where every classic queue, durable or not, pages
 * the messages past its memory limit, which is not durable.
 *
 * <p>Threads: {@link #recover} runs on the starting thread before any listener opens; afterwards
 * {@link #createQueue}, {@link #queueDeclared} and {@link #changed} run under the virtual host's write lock, which
 * guards {@link #queueIds} and {@link #nextQueueId}; the definitions are written by the {@link ChangeLog}'s thread.
 */
public final class DiskStore implements VirtualHostStore, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DiskStore.class.getName());

    private final VhostReplica replica = new VhostReplica();
    private final ChangeLog definitions;
    private final MessageStore messages;
    private final PageStore pages;
    private final long queueMemoryLimit;
    private final Journal.SyncPolicy policy;
    private final Path directory;
    /** {@code streams/}: a directory per stream, named by its queue id. */
    private final Path streams;
    /** Guarded by {@code this}. */
    private StreamSyncer streamSyncer;
    /** Durable queues by name: the id their journal records carry. */
    private final Map<String, Long> queueIds = new HashMap<>();
    private long nextQueueId = 1;
    private boolean recovering;

    /**
     * @param segmentBytes journal segment size (see {@link Journal})
     * @param queueMemoryLimit bytes of waiting messages a queue keeps in memory before it pages the ones that
     *        arrive to its page files (see {@link ClassicQueue})
     */
    public DiskStore(Path directory, Journal.SyncPolicy policy, long segmentBytes, long queueMemoryLimit) {
        this(directory, policy, segmentBytes, queueMemoryLimit, ChangeLog.Compaction.DEFAULTS);
    }

    /** @param maxMessageBytes the largest message the journal must hold (the broker's {@code max-message-size}) */
    public DiskStore(Path directory, Journal.SyncPolicy policy, long segmentBytes, long queueMemoryLimit,
            long maxMessageBytes) {
        this(directory, policy, segmentBytes, queueMemoryLimit, maxMessageBytes, ChangeLog.Compaction.DEFAULTS);
    }

    /** @param compaction when the definitions' change log is compacted into a new snapshot */
    public DiskStore(Path directory, Journal.SyncPolicy policy, long segmentBytes, long queueMemoryLimit,
            ChangeLog.Compaction compaction) {
        this(directory, policy, segmentBytes, queueMemoryLimit, Journal.DEFAULT_MAX_MESSAGE_BYTES, compaction);
    }

    private DiskStore(Path directory, Journal.SyncPolicy policy, long segmentBytes, long queueMemoryLimit,
            long maxMessageBytes, ChangeLog.Compaction compaction) {
        this.queueMemoryLimit = queueMemoryLimit;
        this.policy = policy;
        this.directory = directory;
        this.streams = directory.resolve("streams");
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + directory, e);
        }
        Path legacy = directory.resolve(LegacyDefinitions.FILE);
        this.definitions = ChangeLog.open(directory, "definitions", replica, compaction,
            () -> LegacyDefinitions.vhost(legacy));
        LegacyDefinitions.delete(legacy);
        this.messages = new MessageStore(directory.resolve("journal"), policy, segmentBytes, maxMessageBytes);
        // bytes waiting for the page writer: a few queues' worth of the memory limit, and never less than 64 MiB
        this.pages = new PageStore(directory.resolve("paging"), PageStore.DEFAULT_SEGMENT_BYTES,
            Math.max(64L << 20, queueMemoryLimit > Long.MAX_VALUE / 4 ? Long.MAX_VALUE : 4 * queueMemoryLimit));
    }

    public MessageStore messages() {
        return messages;
    }

    /**
     * Declares the stored policies, exchanges, queues and bindings in {@code vhost}, puts the journal's live messages
     * back in their queues, and starts the journal. Call once, on a virtual host made with this store, before anyone
     * can reach it.
     */
    public void recover(VirtualHost vhost) {
        List<Binding> bindings = replica.bindings();
        recovering = true;
        try {
            nextQueueId = replica.nextQueueId();
            for (PolicySet policy : replica.policies()) {
                vhost.setPolicy(policy.policy(), policy.operator()); // first: queues and exchanges start under them
            }
            for (Exchange exchange : replica.exchanges()) {
                vhost.recoverExchange(exchange);
            }
            for (QueueDeclared queue : replica.queues()) {
                queueIds.put(queue.name(), queue.id());
                vhost.recoverQueue(new QueueDeclaration(queue.name(), true, false, queue.autoDelete(),
                    queue.arguments()), queue.incarnation());
            }
            vhost.recoverBindings(bindings);
        } finally {
            recovering = false;
        }
        int exchanges = replica.exchanges().size();
        int queues = replica.queues().size();
        definitions.start(); // the replica is the writer's from here
        Map<Long, String> names = new HashMap<>();
        queueIds.forEach((name, id) -> names.put(id, name));
        Map<Long, List<StoredMessage>> recovered = messages.recover();
        List<ClassicQueue> restored = new ArrayList<>();
        for (Map.Entry<Long, List<StoredMessage>> e : recovered.entrySet()) {
            String name = names.get(e.getKey());
            Queue queue = name == null ? null : vhost.queue(name);
            if (queue instanceof ClassicQueue classic) {
                classic.restore(e.getValue());
                restored.add(classic);
            } else {
                // the queue was deleted and the crash came before its deletion reached the journal
                e.getValue().forEach(messages::discard);
            }
        }
        messages.start();
        deleteOrphanStreams(vhost);
        // only now may a message that expired while the broker was down die: its dead-letter queue is restored
        // (its sequences taken) and the journal writes
        restored.forEach(ClassicQueue::recovered);
        LOG.log(System.Logger.Level.INFO, "virtual host {0} recovered: {1} exchanges, {2} queues, {3} bindings",
            vhost.name(), exchanges, queues, bindings.size());
    }

    @Override
    public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
        if (QueueType.of(declaration.arguments()) == QueueType.STREAM) {
            return createStream(declaration, executor, context);
        }
        if (!declaration.persistent()) {
            return new ClassicQueue(declaration, executor, null, queueMemoryLimit, context, pages.queuePages());
        }
        long id = queueIds.computeIfAbsent(declaration.name(), n -> nextQueueId++);
        ClassicQueue[] queue = new ClassicQueue[1];
        queue[0] = new ClassicQueue(declaration, executor, messages.log(id, executor, location -> queue[0].relocate(location)),
            queueMemoryLimit, context, pages.queuePages());
        return queue[0];
    }

    /**
     * A stream: its log in {@code streams/<queue id>/}, opened (recovered) here, its settings from its arguments;
     * the stream's thread writes it from then on.
     */
    private StreamQueue createStream(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
        long id = queueIds.computeIfAbsent(declaration.name(), n -> nextQueueId++);
        StreamArguments arguments = StreamArguments.of(context.vhost(), declaration.name(), declaration.arguments());
        StreamLogConfig config = StreamLogConfig.defaults(policy)
            .withRetention(arguments.maxLengthBytes(), arguments.maxAgeMillis())
            .withClock(context.clock()::millis)
            .withSyncer(streamSyncer());
        if (arguments.maxSegmentSizeBytes() > 0) {
            // RabbitMQ takes up to 3,000,000,000; our segments are at most 2 GiB (32-bit chunk positions)
            config = config.withMaxSegmentBytes(Math.min(arguments.maxSegmentSizeBytes(),
                StreamLogConfig.MAX_SEGMENT_BYTES_LIMIT));
        }
        if (arguments.filterSizeBytes() > 0) {
            config = config.withFilterSize(arguments.filterSizeBytes());
        }
        StreamLogStore log = StreamLogStore.open(streams.resolve(Long.toString(id)), config);
        return new StreamQueue(declaration, executor, context, log, queueMemoryLimit);
    }

    /** The thread that syncs this virtual host's streams under {@code sync}; made with the first stream. */
    private StreamSyncer streamSyncer() {
        if (policy != Journal.SyncPolicy.SYNC) {
            return null;
        }
        synchronized (this) {
            if (streamSyncer == null) {
                streamSyncer = new StreamSyncer("skiffmq-stream-sync-" + directory.getFileName());
            }
            return streamSyncer;
        }
    }

    /**
     * Deletes the stream directories no stream of the definitions owns: streams whose deletion a crash interrupted
     * (gone from the definitions, not yet from the disk), or declared and never saved.
     */
    private void deleteOrphanStreams(VirtualHost vhost) {
        if (!Files.isDirectory(streams)) {
            return;
        }
        Set<String> owned = new HashSet<>();
        for (Queue queue : vhost.queues()) {
            Long id = queueIds.get(queue.name());
            if (queue.type() == QueueType.STREAM && id != null) {
                owned.add(Long.toString(id));
            }
        }
        try (java.util.stream.Stream<Path> dirs = Files.list(streams)) {
            for (Path dir : dirs.toList()) {
                if (!owned.contains(dir.getFileName().toString())) {
                    LOG.log(System.Logger.Level.INFO, "deleting {0}: no stream owns it", dir);
                    deleteTree(dir);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot look for orphan streams in " + streams, e);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Override
    public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
        return queueDeclared(declaration, 0);
    }

    @Override
    public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration, long incarnation) {
        if (recovering) {
            return CompletableFuture.completedFuture(null);
        }
        return definitions.append(new QueueDeclared(declaration.name(), queueIds.get(declaration.name()),
            declaration.autoDelete(), declaration.arguments(), incarnation));
    }

    @Override
    public CompletableFuture<Void> changed(List<VhostChange> changes) {
        if (recovering) {
            return CompletableFuture.completedFuture(null);
        }
        for (VhostChange change : changes) {
            if (change instanceof QueueDeleted deleted) {
                // a queue declared later under its name gets a new id
                queueIds.remove(deleted.name());
            }
        }
        return definitions.append(changes);
    }

    /** Closes the store; its streams were closed before (their queues close them). */
    @Override
    public void close() {
        definitions.close();
        messages.close();
        pages.close();
        synchronized (this) {
            if (streamSyncer != null) {
                streamSyncer.close();
            }
        }
    }
}
