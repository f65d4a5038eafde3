package io.skiffmq.store.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.TurnExecutor;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamFilterSpec;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.core.time.ManualClock;
import io.skiffmq.store.Journal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The core's stream queue on the store's stream log, on the calling thread (the log committing at once, {@code os}):
 * chunks of what is published together, confirms once committed, each offset specification, prefetch and credit
 * consumers, sub-entry batches as the stream protocol writes them, counts, and a reopened log.
 */
@ExtendWith({LeakDetection.class, SegmentsReleased.class})
class StreamQueueTest {
    private static final long START = 1_700_000_000_000L;

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(START);
    private final TurnExecutor turns = new TurnExecutor();
    private final List<Sink> sinks = new ArrayList<>();
    private final List<StreamQueue> queues = new ArrayList<>();

    @AfterEach
    void close() {
        sinks.forEach(Sink::releaseAll);
        queues.forEach(StreamQueue::close);
    }

    private StreamQueue open(Map<String, Object> arguments, StreamLogConfig config) {
        Map<String, Object> all = new java.util.HashMap<>(arguments);
        all.put("x-queue-type", "stream");
        QueueContext context = new QueueContext("/", clock, null, false);
        StreamQueue queue = new StreamQueue(QueueDeclaration.of("s", true, all), turns, context,
            StreamLogStore.open(dir, config.withClock(clock::millis)), 1 << 20);
        queues.add(queue);
        return queue;
    }

    private StreamQueue open() {
        return open(Map.of(), StreamLogConfig.defaults(Journal.SyncPolicy.OS));
    }

    /** An AMQP 1.0 message whose body is {@code text}, with a filter value annotation unless null. */
    static Amqp10Message message(String text, String filterValue) {
        ByteBuf bytes = Unpooled.buffer();
        if (filterValue != null) {
            ProtonCodec.current().encode(new MessageAnnotations(Map.of(Symbol.valueOf("x-stream-filter-value"),
                filterValue)), bytes);
        }
        ProtonCodec.current().encode(new Data(new Binary(text.getBytes(StandardCharsets.UTF_8))), bytes);
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "s");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Publishes the bodies in one turn of the stream's thread: one chunk. */
    private void publish(StreamQueue queue, String filterValue, String... bodies) {
        for (String body : bodies) {
            queue.publish(message(body, filterValue), null);
        }
        turns.endTurn();
    }

    private Sink consume(StreamQueue queue, StreamOffset from, StreamFilterSpec filter, int prefetch) {
        Sink sink = new Sink();
        sinks.add(sink);
        sink.consumer = queue.subscribe(sink, ConsumerFlow.prefetch(prefetch, null), false,
            new StreamConsumerArguments(from, filter));
        sink.queue = queue;
        turns.endTurn();
        return sink;
    }

    private Sink consume(StreamQueue queue, StreamOffset from) {
        return consume(queue, from, null, 1000);
    }

    @Test
    void whatIsPublishedInOneRunIsOneChunkAndOffsetsAreDense() {
        StreamQueue queue = open();
        publish(queue, null, "a0", "a1", "a2");
        publish(queue, null, "b3", "b4");
        StreamLog log = ((StreamLogStore) queue.store()).log();
        assertThat(log.committedChunkId()).as("two chunks: 0..2 and 3..4").isEqualTo(3);
        assertThat(queue.messages()).isEqualTo(5);
        assertThat(queue.readyCount()).isEqualTo(5);
        Sink all = consume(queue, StreamOffset.first());
        assertThat(all.offsets()).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(all.bodies()).containsExactly("a0", "a1", "a2", "b3", "b4");
    }

    @Test
    void eachOffsetSpecificationStartsWhereRabbitMqStarts() {
        StreamQueue queue = open();
        publish(queue, null, "a0", "a1", "a2");
        clock.advance(1000);
        publish(queue, null, "b3", "b4", "b5");
        assertThat(consume(queue, StreamOffset.last()).offsets()).as("the last chunk").containsExactly(3L, 4L, 5L);
        assertThat(consume(queue, StreamOffset.offset(4)).offsets()).containsExactly(4L, 5L);
        assertThat(consume(queue, StreamOffset.offset(1)).offsets()).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(consume(queue, StreamOffset.timestamp(START + 500)).offsets()).containsExactly(3L, 4L, 5L);
        assertThat(consume(queue, StreamOffset.timestamp(START)).offsets()).hasSize(6);
        Sink next = consume(queue, StreamOffset.next());
        Sink ahead = consume(queue, StreamOffset.offset(7));
        Sink later = consume(queue, StreamOffset.timestamp(START + 5000));
        assertThat(next.offsets()).isEmpty();
        publish(queue, null, "c6", "c7");
        assertThat(next.offsets()).containsExactly(6L, 7L);
        assertThat(ahead.offsets()).containsExactly(7L);
        assertThat(later.offsets()).containsExactly(6L, 7L);
    }

    @Test
    void confirmsRunOnceTheChunkIsCommitted() {
        StreamQueue queue = open();
        AtomicInteger confirmed = new AtomicInteger();
        PublishConfirm confirm = confirmed::incrementAndGet;
        queue.publish(message("m", null), confirm);
        queue.publish(message("m", null), confirm);
        assertThat(confirmed).as("not written yet").hasValue(0);
        turns.endTurn();
        assertThat(confirmed).as("written and committed (os): confirmed").hasValue(2);
    }

    @Test
    void underSyncConfirmsWaitForTheSyncer() throws Exception {
        StreamSyncer syncer = new StreamSyncer("test-sync");
        try {
            java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();
            Thread[] owner = new Thread[1];
            thread.submit(() -> owner[0] = Thread.currentThread()).get();
            QueueExecutor executor = new QueueExecutor() {
                @Override
                public boolean inExecutor() {
                    return Thread.currentThread() == owner[0];
                }

                @Override
                public void execute(Runnable task) {
                    thread.execute(task);
                }
            };
            Map<String, Object> arguments = Map.of("x-queue-type", "stream");
            StreamQueue queue = new StreamQueue(QueueDeclaration.of("s", true, arguments), executor,
                new QueueContext("/", clock, null, false), StreamLogStore.open(dir,
                    StreamLogConfig.defaults(Journal.SyncPolicy.SYNC).withSyncer(syncer)), 1 << 20);
            java.util.concurrent.CountDownLatch confirmed = new java.util.concurrent.CountDownLatch(3);
            for (int i = 0; i < 3; i++) {
                queue.publish(message("m" + i, null), confirmed::countDown);
            }
            assertThat(confirmed.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(queue.counts().get().ready()).isEqualTo(3);
            queue.close().get();
            thread.shutdown();
        } finally {
            syncer.close();
        }
    }

    @Test
    void settlementsOfAnyOutcomeGiveThePrefetchBackAndTheMessagesStay() {
        StreamQueue queue = open();
        publish(queue, null, "m0", "m1", "m2", "m3", "m4");
        Sink sink = consume(queue, StreamOffset.first(), null, 2);
        assertThat(sink.offsets()).containsExactly(0L, 1L);
        assertThat(queue.unackedCount()).isEqualTo(2);
        queue.settle(sink.consumer, 0, 0, Outcome.REJECTED);
        turns.endTurn();
        assertThat(sink.offsets()).containsExactly(0L, 1L, 2L);
        queue.settle(sink.consumer, 1, 2, Outcome.MODIFIED_FAILED);
        turns.endTurn();
        assertThat(sink.offsets()).containsExactly(0L, 1L, 2L, 3L, 4L);
        queue.settle(sink.consumer, 0, 10, Outcome.ACCEPTED); // tags settled or never given are skipped
        turns.endTurn();
        assertThat(queue.unackedCount()).isZero();
        assertThat(queue.counters().acknowledged()).isEqualTo(2);
        assertThat(consume(queue, StreamOffset.first()).offsets()).hasSize(5);
        assertThat(queue.messages()).isEqualTo(5);
    }

    @Test
    void aConsumerGetsABudgetPerDispatchAndTheRestAfterTheTurn() {
        StreamQueue queue = open();
        String[] bodies = new String[3000];
        java.util.Arrays.setAll(bodies, i -> "m" + i);
        publish(queue, null, bodies);
        Sink sink = new Sink();
        sinks.add(sink);
        sink.queue = queue;
        sink.consumer = queue.subscribe(sink, ConsumerFlow.prefetch(5000, null), false,
            new StreamConsumerArguments(StreamOffset.first(), null));
        assertThat(turns.runOne()).as("the dispatch the subscription asked for").isTrue();
        assertThat(sink.deliveries).hasSize(1024);
        assertThat(turns.waiting()).as("another dispatch, after the turn").isEqualTo(1);
        turns.endTurn();
        assertThat(sink.offsets()).isEqualTo(range(0, 3000));
    }

    @Test
    void aCreditConsumerIsPacedByItsCreditAndDrains() {
        StreamQueue queue = open();
        publish(queue, null, "m0", "m1", "m2", "m3", "m4");
        Sink sink = new Sink();
        sinks.add(sink);
        sink.consumer = queue.subscribe(sink, ConsumerFlow.credit(), false,
            new StreamConsumerArguments(StreamOffset.first(), null));
        assertThat(sink.offsets()).isEmpty();
        queue.flow(sink.consumer, 0, 3, false, true);
        assertThat(sink.offsets()).containsExactly(0L, 1L, 2L);
        assertThat(sink.credit).containsExactly(List.of(3L, 0L, 2L));
        queue.flow(sink.consumer, 3, 10, true, false);
        assertThat(sink.offsets()).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(sink.credit.get(1)).as("drained: delivery-count advanced, no credit left")
            .containsExactly(13L, 0L, 0L);
    }

    @Test
    void chunksAFilterRulesOutAreNotRead() {
        StreamQueue queue = open();
        publish(queue, "eu", "eu0", "eu1");
        publish(queue, "us", "us2");
        publish(queue, null, "none3");
        assertThat(consume(queue, StreamOffset.first(), new StreamFilterSpec(List.of("us"), false), 10).bodies())
            .containsExactly("us2");
        assertThat(consume(queue, StreamOffset.first(), new StreamFilterSpec(List.of("eu"), true), 10).bodies())
            .containsExactly("eu0", "eu1", "none3");
    }

    @Test
    void subEntryBatchesAreReadEntryByEntryAndCompressedOnesSkippedWithTheirOffsets() {
        StreamQueue queue = open();
        StreamLog log = ((StreamLogStore) queue.store()).log();
        ByteBuf plain = batch(0, "p0", "p1", "p2");
        ByteBuf zipped = batch(1, "z3", "z4");
        ByteBuf single = entry("s5");
        try {
            ChunkBuilder builder = log.chunkBuilder();
            assertThat(builder.addEntry(plain)).isEqualTo(ChunkBuilder.ADDED);
            assertThat(builder.addEntry(zipped)).isEqualTo(ChunkBuilder.ADDED);
            assertThat(builder.addEntry(single)).isEqualTo(ChunkBuilder.ADDED);
            // as the stream protocol will: entries added on the stream's thread, a publish in the same turn
            queue.commitAfterTurn();
            AtomicInteger confirmed = new AtomicInteger();
            queue.publish(message("published6", null), confirmed::incrementAndGet);
            turns.endTurn();
            assertThat(confirmed).hasValue(1);
            assertThat(log.committedChunkId()).as("one chunk").isZero();
        } finally {
            plain.release();
            zipped.release();
            single.release();
        }
        Sink sink = consume(queue, StreamOffset.first());
        assertThat(sink.bodies()).containsExactly("p0", "p1", "p2", "s5", "published6");
        assertThat(sink.offsets()).containsExactly(0L, 1L, 2L, 5L, 6L);
        assertThat(consume(queue, StreamOffset.offset(2)).offsets()).containsExactly(2L, 5L, 6L);
    }

    /** A simple entry: {@code 0 | u31 length | an AMQP 1.0 message}. */
    private static ByteBuf entry(String body) {
        Amqp10Message m = message(body, null);
        try {
            ByteBuf entry = Unpooled.buffer();
            entry.writeInt(m.bytes().readableBytes()).writeBytes(m.bytes(), m.bytes().readerIndex(),
                m.bytes().readableBytes());
            return entry;
        } finally {
            m.release();
        }
    }

    /** A sub-entry batch of simple entries, marked with {@code compression} (its bytes are not compressed here). */
    private static ByteBuf batch(int compression, String... bodies) {
        ByteBuf inner = Unpooled.buffer();
        for (String body : bodies) {
            ByteBuf e = entry(body);
            inner.writeBytes(e);
            e.release();
        }
        ByteBuf batch = Unpooled.buffer();
        batch.writeByte(0x80 | compression << 4).writeShort(bodies.length).writeInt(inner.readableBytes())
            .writeInt(inner.readableBytes()).writeBytes(inner);
        inner.release();
        return batch;
    }

    @Test
    void anAmqp10MessageIsStoredAsItsPublisherSentItAndA091OneAsItsConversion() {
        StreamQueue queue = open();
        Amqp10Message sent = message("as sent", "eu");
        byte[] sentBytes = ByteBufUtil.getBytes(sent.bytes());
        queue.publish(sent, null);
        turns.endTurn();
        try (StreamReader reader = ((StreamLogStore) queue.store()).log().reader(StreamOffset.first(), null)) {
            ByteBuf data = reader.next().retainedData();
            try {
                assertThat(data.readInt()).isEqualTo(sentBytes.length);
                assertThat(ByteBufUtil.getBytes(data)).as("byte for byte").isEqualTo(sentBytes);
            } finally {
                data.release();
            }
        }
    }

    @Test
    void publishersOnOtherThreadsAreHeldWhileTooMuchWaitsToBeWritten() {
        Parked parked = new Parked();
        Map<String, Object> arguments = Map.of("x-queue-type", "stream");
        StreamQueue queue = new StreamQueue(QueueDeclaration.of("s", true, arguments), parked,
            new QueueContext("/", clock, null, false), StreamLogStore.open(dir,
                StreamLogConfig.defaults(Journal.SyncPolicy.OS)), 500);
        for (int i = 0; i < 50; i++) {
            queue.publish(message("message " + i, null), null); // some 15 bytes each, handed over
        }
        assertThat(queue.holdsPublishers()).isTrue();
        AtomicInteger resumed = new AtomicInteger();
        assertThat(queue.holdPublisher(resumed::incrementAndGet)).isTrue();
        parked.runAll();
        assertThat(resumed).as("written: the publishers go on").hasValue(1);
        assertThat(queue.holdsPublishers()).isFalse();
        assertThat(queue.holdPublisher(resumed::incrementAndGet)).isFalse();
        assertThat(queue.messages()).isEqualTo(50);
        queue.close();
        parked.runAll();
    }

    /** A stream thread that runs nothing until told: what publishers on other threads hand over waits. */
    static final class Parked implements QueueExecutor {
        private final java.util.ArrayDeque<Runnable> tasks = new java.util.ArrayDeque<>();
        private boolean running;

        @Override
        public boolean inExecutor() {
            return running;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        void runAll() {
            running = true;
            Runnable task;
            while ((task = tasks.poll()) != null) {
                task.run();
            }
            running = false;
        }
    }

    @Test
    void getAndPurgeAreRefusedAsRabbitMqRefusesThem() {
        StreamQueue queue = open();
        assertThatThrownBy(() -> queue.purge().join()).hasCauseInstanceOf(BrokerException.class)
            .hasMessageContaining("queue.purge not supported by stream queues queue 's' in vhost '/'");
        Sink sink = new Sink();
        sink.consumer = queue.subscribe(sink, ConsumerFlow.pull(), false);
        assertThatThrownBy(() -> queue.get(sink.consumer).join()).hasCauseInstanceOf(BrokerException.class)
            .hasMessageContaining("basic.get not supported by stream queues queue 's' in vhost '/'");
        queue.unsubscribe(sink.consumer, Outcome.RELEASED);
    }

    @Test
    void aReopenedStreamHasItsMessagesAndGoesOnFromItsNextOffset() {
        StreamQueue queue = open();
        publish(queue, null, "m0", "m1");
        queue.close().join();
        queues.clear();
        StreamQueue reopened = open();
        publish(reopened, null, "m2");
        assertThat(reopened.messages()).isEqualTo(3);
        assertThat(consume(reopened, StreamOffset.first()).bodies()).containsExactly("m0", "m1", "m2");
    }

    @Test
    void deletingTheStreamTellsItsConsumersAndDeletesItsLog() throws Exception {
        StreamQueue queue = open();
        publish(queue, null, "m0");
        Sink sink = consume(queue, StreamOffset.first());
        assertThat(sink.offsets()).containsExactly(0L);
        assertThat(queue.delete().join()).isEqualTo(1);
        assertThat(sink.deleted).isTrue();
        assertThat(Files.exists(dir)).isFalse();
        AtomicInteger confirmed = new AtomicInteger();
        queue.publish(message("late", null), confirmed::incrementAndGet);
        turns.endTurn();
        assertThat(confirmed).as("into a deleted stream: nothing to keep safe").hasValue(1);
        queues.clear();
    }

    /** Records deliveries (releasing nothing until the end), credit replies and deletion. Thread-safe. */
    static final class Sink implements ConsumerSink {
        final List<QueueDelivery> deliveries = new CopyOnWriteArrayList<>();
        final List<List<Long>> credit = new CopyOnWriteArrayList<>();
        volatile boolean deleted;
        QueueConsumer consumer;
        StreamQueue queue;

        @Override
        public void deliver(QueueDelivery delivery) {
            deliveries.add(delivery);
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
            credit.add(List.of(deliveryCount, linkCredit, available));
        }

        @Override
        public void queueDeleted() {
            deleted = true;
        }

        List<Long> offsets() {
            return deliveries.stream().map(d -> ((Amqp10Message) d.message()).streamOffset()).toList();
        }

        List<String> bodies() {
            return deliveries.stream().map(d -> body(d.message())).toList();
        }

        private static String body(Message message) {
            Amqp10Message m = (Amqp10Message) message;
            ByteBuf b = m.bytes();
            MessageSections.Section data = m.sections().sections().get(m.sections().sections().size() - 1);
            int value = data.valueOffset();
            int start = b.getUnsignedByte(b.readerIndex() + value) == 0xa0 ? value + 2 : value + 5;
            return new String(ByteBufUtil.getBytes(b, b.readerIndex() + start, data.endOffset() - start),
                StandardCharsets.UTF_8);
        }

        void releaseAll() {
            deliveries.forEach(d -> d.message().release());
            deliveries.clear();
            if (queue != null && consumer != null) {
                queue.unsubscribe(consumer, Outcome.RELEASED);
            }
        }
    }

    static List<Long> range(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }
}
