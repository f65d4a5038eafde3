package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.store.definitions.ChangeLog;
import io.skiffmq.store.definitions.OldDefinitionsFormat;
import io.skiffmq.store.definitions.VhostReplica;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.time.BrokerClock;
import io.skiffmq.core.time.ManualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A virtual host on disk: definitions and messages across restarts, and space coming back. */
@ExtendWith(LeakDetection.class)
class DiskStoreTest {
    /** A header with every field at its default: durable is false. */
    private static final byte[] TRANSIENT_HEADER = {0x00, 0x53, 0x70, 0x45};

    @TempDir
    Path dir;

    private final ExecutorService loop = Executors.newSingleThreadExecutor();
    private final Thread[] loopThread = new Thread[1];
    private final QueueExecutor executor = new QueueExecutor() {
        @Override
        public boolean inExecutor() {
            return Thread.currentThread() == loopThread[0];
        }

        @Override
        public void execute(Runnable task) {
            loop.execute(task);
        }
    };
    private final List<DiskStore> open = new ArrayList<>();
    /** What the virtual hosts started next run on. */
    private BrokerClock clock = BrokerClock.SYSTEM;

    @AfterEach
    void close() throws Exception {
        onLoop(() -> { });
        open.forEach(DiskStore::close);
        loop.shutdown();
    }

    private VirtualHost start(long segmentBytes) throws Exception {
        return start(segmentBytes, 1L << 30);
    }

    private VirtualHost start(long segmentBytes, long queueMemoryLimit) throws Exception {
        loop.submit(() -> loopThread[0] = Thread.currentThread()).get();
        DiskStore store = new DiskStore(dir, Journal.SyncPolicy.OS, segmentBytes, queueMemoryLimit);
        open.add(store);
        VirtualHost vhost = new VirtualHost("/", () -> executor, store, clock, true);
        store.recover(vhost);
        return vhost;
    }

    /** Stops as the broker stops: every queue closes (saying which messages it had delivered), then the store. */
    private VirtualHost stopCleanlyAndStart(VirtualHost vhost) throws Exception {
        for (Queue queue : vhost.queues()) {
            queue.close().get(10, TimeUnit.SECONDS);
        }
        return restart(Journal.DEFAULT_SEGMENT_BYTES);
    }

    private VirtualHost restart(long segmentBytes) throws Exception {
        onLoop(() -> { });
        open.remove(open.size() - 1).close();
        return start(segmentBytes);
    }

    private void onLoop(Runnable task) throws Exception {
        loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    private static Message message(String body, boolean durable) throws Exception {
        byte[] text = body.getBytes(StandardCharsets.UTF_8);
        ByteBuf bytes = Unpooled.buffer();
        if (!durable) {
            bytes.writeBytes(TRANSIENT_HEADER);
        }
        bytes.writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) text.length}).writeBytes(text);
        return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
    }

    /** Publishes and waits for every confirm. */
    private static void publish(Queue queue, List<Message> messages) throws Exception {
        CountDownLatch confirmed = new CountDownLatch(messages.size());
        for (Message m : messages) {
            queue.publish(m, confirmed::countDown);
        }
        assertThat(confirmed.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /** A consumer that keeps its deliveries, each a body and the delivery. */
    private static final class Collector implements ConsumerSink {
        final LinkedBlockingQueue<QueueDelivery> deliveries = new LinkedBlockingQueue<>();

        @Override
        public void deliver(QueueDelivery delivery) {
            deliveries.add(delivery);
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        }

        @Override
        public void queueDeleted() {
        }

        /** The next delivery's body; the delivery's message reference is released. */
        QueueDelivery take(Map<String, QueueDelivery> into) throws InterruptedException {
            QueueDelivery d = deliveries.poll(10, TimeUnit.SECONDS);
            assertThat(d).as("a delivery").isNotNull();
            into.put(body(d.message()), d);
            d.message().release();
            return d;
        }
    }

    /** The text of a message built by {@link #message}: after the body's vbin8 constructor and length. */
    private static String body(Message message) {
        String s = new String(ByteBufUtil.getBytes(message.toAmqp10().bytes()), StandardCharsets.ISO_8859_1);
        return s.substring(s.lastIndexOf((char) 0xa0) + 2);
    }

    private static List<String> drain(Queue queue, int count, Map<String, QueueDelivery> deliveries) throws Exception {
        Collector collector = new Collector();
        QueueConsumer consumer = queue.subscribe(collector, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, count + 10, false, false);
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            QueueDelivery d = collector.take(deliveries);
            bodies.add(body(d.message()));
        }
        queue.flow(consumer, count, 0, false, false);
        for (QueueDelivery d : deliveries.values()) {
            queue.settle(consumer, d.tag(), d.tag(), Outcome.ACCEPTED);
        }
        queue.unsubscribe(consumer, Outcome.RELEASED);
        return bodies;
    }

    @Test
    void aDirectoryWrittenByTheOldDefinitionsFormatIsMigratedWithNothingLost() throws Exception {
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("x-match", "all");
        headers.put("n", UnsignedInteger.valueOf(7));
        headers.put("present", null);
        Exchange topic = new Exchange("events", Exchange.Type.TOPIC, true, false, false, Map.of("k", 1L));
        Exchange matching = new Exchange("match", Exchange.Type.HEADERS, true, true, false, Map.of());
        List<Binding> bindings = List.of(new Binding("events", Destination.queue("orders"), "a.#", Map.of()),
            new Binding("match", Destination.queue("orders"), "", headers),
            new Binding("amq.fanout", Destination.exchange("events"), "", Map.of()));
        OldDefinitionsFormat.writeVhost(dir.resolve("definitions.amqp"), 9, List.of(
                new QueueDeclared("orders", 7, false, Map.of("x-max-length", 10L)),
                new QueueDeclared("fleeting", 8, true, Map.of())),
            List.of(topic, matching), bindings);

        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES);
        assertThat(dir.resolve("definitions.amqp")).as("migrated, then gone").doesNotExist();
        assertThat(dir.resolve("definitions.snapshot")).exists();
        assertThat(vhost.queue("orders").arguments()).isEqualTo(Map.of("x-max-length", 10L));
        assertThat(vhost.queue("fleeting").declaration().autoDelete()).isTrue();
        assertThat(vhost.exchange("events")).isEqualTo(topic);
        assertThat(vhost.exchange("match")).isEqualTo(matching);
        assertThat(vhost.bindings().all()).containsExactlyInAnyOrderElementsOf(bindings);
        vhost.declareQueue("fresh", true, Map.of());

        VirtualHost after = restart(Journal.DEFAULT_SEGMENT_BYTES);
        assertThat(after.bindings().all()).containsExactlyInAnyOrderElementsOf(bindings);
        assertThat(after.queue("fresh")).isNotNull();
        open.remove(open.size() - 1).close();
        VhostReplica replica = new VhostReplica();
        ChangeLog.open(dir, "definitions", replica, ChangeLog.Compaction.DEFAULTS, () -> null).close();
        assertThat(replica.queues()).as("the journal's ids kept, and none given twice")
            .extracting(QueueDeclared::name, QueueDeclared::id)
            .containsExactly(tuple("orders", 7L), tuple("fleeting", 8L), tuple("fresh", 9L));
    }

    @Test
    void definitionsComeBackExactlyAndTransientOnesLeaveNoTrace() throws Exception {
        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES);
        Map<String, Object> queueArgs = Map.of("x-queue-type", "classic");
        vhost.declareQueue("orders", true, queueArgs);
        vhost.declareQueue("scratch", false, Map.of());
        vhost.declareQueue(new QueueDeclaration("fleeting", true, false, true, Map.of()), null);
        vhost.declareQueue(new QueueDeclaration("connection-bound", true, true, false, Map.of()), new Object());
        for (Exchange.Type type : Exchange.Type.values()) {
            vhost.declareExchange(new Exchange("x-" + type, type, true, false, false, Map.of()));
        }
        vhost.declareExchange(new Exchange("with-ae", Exchange.Type.DIRECT, true, false, true,
            Map.of("alternate-exchange", "x-FANOUT")));
        vhost.declareExchange(new Exchange("gone-with-restart", Exchange.Type.TOPIC, false, false, false, Map.of()));
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("x-match", "any");
        headers.put("region", "eu");
        headers.put("priority", UnsignedInteger.valueOf(7));
        headers.put("flag", Symbol.valueOf("s"));
        headers.put("present", null);
        List<Binding> durable = List.of(
            new Binding("x-HEADERS", Destination.queue("orders"), "", headers),
            new Binding("x-TOPIC", Destination.queue("orders"), "a.*.c", Map.of()),
            new Binding("x-TOPIC", Destination.queue("orders"), "a.*.c", Map.of("k", 1L)),
            new Binding("x-FANOUT", Destination.exchange("x-DIRECT"), "", Map.of()),
            new Binding("x-LOCAL_RANDOM", Destination.queue("orders"), "", Map.of()));
        durable.forEach(vhost::bind);
        vhost.bind(new Binding("x-FANOUT", Destination.queue("scratch"), "", Map.of()));
        vhost.bind(new Binding("gone-with-restart", Destination.queue("orders"), "#", Map.of()));

        VirtualHost after = restart(Journal.DEFAULT_SEGMENT_BYTES);
        assertThat(after.queue("orders").durable()).isTrue();
        assertThat(after.queue("orders").arguments()).isEqualTo(queueArgs);
        assertThat(after.queue("scratch")).isNull();
        assertThat(after.queue("fleeting").declaration().autoDelete()).as("durable auto-delete comes back").isTrue();
        assertThat(after.queue("connection-bound")).as("an exclusive queue goes with its connection").isNull();
        assertThat(after.exchange("gone-with-restart")).isNull();
        for (Exchange.Type type : Exchange.Type.values()) {
            assertThat(after.exchange("x-" + type)).isEqualTo(vhost.exchange("x-" + type));
        }
        assertThat(after.exchange("with-ae")).isEqualTo(vhost.exchange("with-ae"));
        assertThat(after.bindings().all()).containsExactlyInAnyOrderElementsOf(durable);
        assertThat(after.bindings().all().stream().filter(b -> b.source().equals("x-HEADERS")).findFirst().orElseThrow()
            .arguments()).as("argument types and a null value intact").isEqualTo(headers);

        after.deleteQueue("orders");
        VirtualHost third = restart(Journal.DEFAULT_SEGMENT_BYTES);
        assertThat(third.queue("orders")).isNull();
        assertThat(third.bindings().all()).containsExactly(durable.get(3));
    }

    @Test
    void durableMessagesComeBackWithTheirDeliveryCountsAndAckedOrTransientOnesDoNot() throws Exception {
        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES);
        Queue queue = vhost.declareQueue("q", true, Map.of());
        Queue scratch = vhost.declareQueue("scratch", false, Map.of());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            messages.add(message("m" + i, true));
        }
        messages.add(message("not durable", false));
        publish(queue, messages);
        publish(scratch, List.of(message("in a transient queue", true)));

        Collector collector = new Collector();
        QueueConsumer consumer = queue.subscribe(collector, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 4, false, false);
        Map<String, QueueDelivery> got = new HashMap<>();
        for (int i = 0; i < 4; i++) {
            collector.take(got);
        }
        queue.settle(consumer, got.get("m0").tag(), got.get("m0").tag(), Outcome.ACCEPTED);
        queue.settle(consumer, got.get("m1").tag(), got.get("m1").tag(), Outcome.REJECTED);
        queue.settle(consumer, got.get("m2").tag(), got.get("m2").tag(), Outcome.MODIFIED_FAILED);
        // m3 stays unsettled: the restart finds it in the queue
        onLoop(() -> { });

        VirtualHost after = restart(Journal.DEFAULT_SEGMENT_BYTES);
        assertThat(after.queue("scratch")).isNull();
        Queue recovered = after.queue("q");
        onLoop(() -> { });
        assertThat(recovered.readyCount()).isEqualTo(8);
        Map<String, QueueDelivery> deliveries = new LinkedHashMap<>();
        assertThat(drain(recovered, 8, deliveries)).containsExactly("m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
        assertThat(deliveries.get("m2").deliveryCount()).isEqualTo(1);
        assertThat(deliveries.get("m4").deliveryCount()).isZero();
        assertThat(deliveries.values()).allMatch(d -> !d.firstAcquirer(), "marked as acquired before");

        VirtualHost third = restart(Journal.DEFAULT_SEGMENT_BYTES);
        onLoop(() -> { });
        assertThat(third.queue("q").readyCount()).as("accepted after the restart: gone for good").isZero();
    }

    @Test
    void deadSegmentsAreDeletedAndAnOldFewAreCopiedForward() throws Exception {
        long segment = 16 * 1024;
        VirtualHost vhost = start(segment);
        Queue queue = vhost.declareQueue("q", true, Map.of());
        MessageStore store = open.get(0).messages();
        publish(queue, List.of(message("keeper", true)));
        long first = store.segments().get(0);

        String padding = "x".repeat(200);
        for (int round = 0; round < 20; round++) {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                batch.add(message(padding, true));
            }
            publish(queue, batch);
            Collector collector = new Collector();
            QueueConsumer consumer = queue.subscribe(collector, ConsumerFlow.credit(), false);
            queue.flow(consumer, 0, 51, false, false);
            for (int i = 0; i < 51; i++) {
                QueueDelivery d = collector.deliveries.poll(10, TimeUnit.SECONDS);
                assertThat(d).isNotNull();
                d.message().release();
                // the keeper is delivered too, and given back: it stays, in the oldest segment
                queue.settle(consumer, d.tag(), d.tag(), d.tag() == 0 ? Outcome.RELEASED : Outcome.ACCEPTED);
            }
            queue.unsubscribe(consumer, Outcome.RELEASED);
        }
        await("the keeper's segment is compacted away").atMost(Duration.ofSeconds(30))
            .until(() -> store.segments().get(0) > first);
        await("dead segments deleted").atMost(Duration.ofSeconds(30))
            .until(() -> store.segments().size() <= MessageStore.COMPACT_AFTER + 1);

        VirtualHost after = restart(segment);
        Map<String, QueueDelivery> deliveries = new HashMap<>();
        onLoop(() -> { });
        assertThat(after.queue("q").readyCount()).as("only the keeper, once").isEqualTo(1);
        assertThat(drain(after.queue("q"), 1, deliveries)).containsExactly("keeper");
        MessageStore restarted = open.get(open.size() - 1).messages();
        await("with nothing live, only the segment being written is left").atMost(Duration.ofSeconds(30))
            .until(() -> restarted.segments().size() == 1);
    }

    @Test
    void aBacklogBeyondTheMemoryLimitKeepsOnlyAnIndexAndIsReadBackInOrder() throws Exception {
        long limit = 4096;
        VirtualHost vhost = start(64 * 1024, limit);
        ClassicQueue queue = (ClassicQueue) vhost.declareQueue("q", true, Map.of());
        String padding = "p".repeat(180);
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            messages.add(message(i + padding, true));
        }
        publish(queue, messages);
        publish(queue, List.of(message("last", true))); // dispatches again, after everything before is written
        onLoop(() -> { });
        assertThat(queue.memoryBytes()).as("only the head stays in memory").isLessThanOrEqualTo(limit + 256);

        List<String> bodies = drain(queue, 1000, new HashMap<>());
        for (int i = 0; i < 1000; i++) {
            assertThat(bodies.get(i)).isEqualTo(i + padding);
        }
        VirtualHost after = restart(64 * 1024);
        ClassicQueue recovered = (ClassicQueue) after.queue("q");
        onLoop(() -> { });
        assertThat(recovered.readyCount()).isEqualTo(1001);
        assertThat(recovered.memoryBytes()).as("recovered as an index only").isZero();
        bodies = drain(recovered, 1001, new HashMap<>());
        for (int i = 0; i < 1000; i++) {
            assertThat(bodies.get(i)).isEqualTo(1000 + i + padding);
        }
        assertThat(bodies.get(1000)).isEqualTo("last");
    }

    private long pageFiles() throws Exception {
        Path paging = dir.resolve("paging");
        if (!java.nio.file.Files.exists(paging)) {
            return 0;
        }
        try (java.util.stream.Stream<Path> walk = java.nio.file.Files.walk(paging)) {
            return walk.filter(java.nio.file.Files::isRegularFile).count();
        }
    }

    @Test
    void aTransientQueuePagesToFilesThatGoWithTheQueue() throws Exception {
        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES, 4096);
        ClassicQueue queue = (ClassicQueue) vhost.declareQueue("scratch", false, Map.of());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            messages.add(message("t" + i, i % 2 == 0));
        }
        publish(queue, messages);
        onLoop(() -> { });
        assertThat(queue.readyCount()).isEqualTo(3000);
        assertThat(queue.memoryBytes()).isLessThanOrEqualTo(4096);
        assertThat(pageFiles()).isPositive();
        assertThat(open.get(0).messages().segments()).as("nothing of a transient queue in the journal").hasSize(1);

        List<String> bodies = drain(queue, 3000, new HashMap<>());
        for (int i = 0; i < 3000; i++) {
            assertThat(bodies.get(i)).isEqualTo("t" + i);
        }
        publish(queue, List.of(message("a", false), message("b", false)));
        vhost.deleteQueue("scratch");
        onLoop(() -> { });
        assertThat(pageFiles()).as("its page files went with it").isZero();
    }

    @Test
    void aDurableQueueWithAPagedTailComesBackWholeAfterARestart() throws Exception {
        long limit = 4096;
        VirtualHost vhost = start(256 * 1024, limit);
        ClassicQueue queue = (ClassicQueue) vhost.declareQueue("q", true, Map.of());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            // transient messages in a durable queue are paged too, and are gone after the restart
            messages.add(message("d" + i, i % 10 != 9));
        }
        publish(queue, messages);
        onLoop(() -> { });
        assertThat(pageFiles()).isPositive();
        List<String> first = drain(queue, 100, new HashMap<>());
        assertThat(first.get(99)).isEqualTo("d99");

        VirtualHost after = restart(256 * 1024);
        assertThat(pageFiles()).as("a restart ignores page files: they are deleted").isZero();
        ClassicQueue recovered = (ClassicQueue) after.queue("q");
        onLoop(() -> { });
        List<String> expected = new ArrayList<>();
        for (int i = 100; i < 3000; i++) {
            if (i % 10 != 9) {
                expected.add("d" + i);
            }
        }
        assertThat(recovered.readyCount()).isEqualTo(expected.size());
        assertThat(drain(recovered, expected.size(), new HashMap<>())).containsExactlyElementsOf(expected);
    }

    @Test
    void aPurgedPagedTailStaysPurgedAfterARestart() throws Exception {
        VirtualHost vhost = start(256 * 1024, 4096);
        ClassicQueue queue = (ClassicQueue) vhost.declareQueue("q", true, Map.of());
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            messages.add(message("p" + i, true));
        }
        publish(queue, messages);
        assertThat(queue.purge().get(10, TimeUnit.SECONDS)).isEqualTo(2000);
        publish(queue, List.of(message("kept", true)));

        VirtualHost after = restart(256 * 1024);
        onLoop(() -> { });
        assertThat(after.queue("q").readyCount()).isEqualTo(1);
        assertThat(drain(after.queue("q"), 1, new HashMap<>())).containsExactly("kept");
    }

    /** Whether each of {@code count} deliveries was its message's first, by body; the messages stay unsettled. */
    private static Map<String, Boolean> firstAcquirers(Queue queue, int count) throws Exception {
        Collector collector = new Collector();
        QueueConsumer consumer = queue.subscribe(collector, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, count, false, false);
        Map<String, QueueDelivery> got = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            collector.take(got);
        }
        Map<String, Boolean> first = new LinkedHashMap<>();
        got.forEach((body, d) -> first.put(body, d.firstAcquirer()));
        return first;
    }

    /**
     * RabbitMQ saves which messages were delivered in its queues' recovery terms at a graceful stop, and marks every
     * message delivered after a crash ({@code rabbit_variable_queue:init/9}): after a clean stop only the messages
     * delivered before it come back redelivered, through any number of clean restarts; a stop that was not clean,
     * even right after a clean start that wrote nothing else, marks them all.
     */
    @Test
    void aCleanStopKeepsWhichMessagesWereDeliveredAndAnyOtherStopMarksThemAll() throws Exception {
        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES);
        Queue queue = vhost.declareQueue("q", true, Map.of());
        publish(queue, List.of(message("m0", true), message("m1", true), message("m2", true), message("m3", true)));
        Collector collector = new Collector();
        QueueConsumer consumer = queue.subscribe(collector, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 2, false, false);
        Map<String, QueueDelivery> got = new HashMap<>();
        collector.take(got);
        collector.take(got);
        queue.settle(consumer, got.get("m0").tag(), got.get("m0").tag(), Outcome.RELEASED);
        onLoop(() -> { }); // m0 is back, delivered before; m1 is still with the consumer at the stop

        VirtualHost twice = stopCleanlyAndStart(stopCleanlyAndStart(vhost)); // not delivered in between
        onLoop(() -> { });
        assertThat(firstAcquirers(twice.queue("q"), 4)).containsExactly(Map.entry("m0", false),
            Map.entry("m1", false), Map.entry("m2", true), Map.entry("m3", true));

        VirtualHost next = stopCleanlyAndStart(twice);
        onLoop(() -> { });
        next.queue("q").purge().get(10, TimeUnit.SECONDS);
        publish(next.queue("q"), List.of(message("fresh", true)));
        stopCleanlyAndStart(next);
        onLoop(() -> { });
        VirtualHost crashed = restart(Journal.DEFAULT_SEGMENT_BYTES); // the queues were not stopped
        onLoop(() -> { });
        assertThat(firstAcquirers(crashed.queue("q"), 1)).containsExactly(Map.entry("fresh", false));
    }

    /**
     * A message's TTL counts from its arrival across a restart, as RabbitMQ's queue index keeps each message's
     * expiry; one whose TTL ran out while the broker was down is dead-lettered once it is back.
     */
    @Test
    void aMessagesTtlCountsOnAcrossARestartAndOneThatRanOutWhileDownIsDeadLettered() throws Exception {
        ManualClock manual = new ManualClock(1_700_000_000_000L);
        clock = manual;
        VirtualHost vhost = start(Journal.DEFAULT_SEGMENT_BYTES);
        vhost.declareQueue("dlq", true, Map.of());
        Queue queue = vhost.declareQueue("q", true, Map.of("x-message-ttl", 1000L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        publish(queue, List.of(message("early", true)));
        manual.advance(600);
        publish(queue, List.of(message("late", true)));
        VirtualHost after = stopCleanlyAndStart(vhost);
        manual.advance(500); // "early" expired while the broker was down
        onLoop(() -> { });
        await().atMost(Duration.ofSeconds(10)).until(() -> after.queue("dlq").readyCount() == 1);
        assertThat(after.queue("q").readyCount()).isEqualTo(1);
        manual.advance(499);
        onLoop(() -> { });
        assertThat(after.queue("q").readyCount()).as("'late' has 1 ms left").isEqualTo(1);
        manual.advance(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> after.queue("dlq").readyCount() == 2);
        assertThat(after.queue("q").readyCount()).isZero();
        assertThat(drain(after.queue("dlq"), 2, new HashMap<>())).containsExactly("early", "late");
    }
}
