package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.time.ManualClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A queue with {@link QueuePages}: past its memory limit, arrivals go to their lane's paged tail with no entry in
 * memory, and come back in order. Order, counts, limits, expiry, purge, deletion and compaction across the tail.
 */
@ExtendWith(LeakDetection.class)
class ClassicQueuePagedTailTest {
    /** Room for about ten small messages in memory. */
    private static final long LIMIT = 10L * (WaitingMessages.ENTRY_OVERHEAD + 10);

    /** A log that keeps nothing but what the queue told it. */
    private static final class RecordingLog implements QueueLog {
        long next;
        final List<long[]> removed = new ArrayList<>();
        final List<Long> relocated = new ArrayList<>();
        boolean deleted;

        @Override
        public long publish(long sequence, Message message, long deliveryCount, long expiresAt,
                Runnable durable) {
            if (durable != null) {
                durable.run();
            }
            return next++;
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long expiresAt,
                long location) {
            relocated.add(sequence);
            return next++;
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount) {
        }

        @Override
        public boolean isWritten(long location) {
            return true;
        }

        @Override
        public Message read(long sequence, long location) {
            throw new AssertionError("a queue with pages reads nothing back from its log");
        }

        @Override
        public void whenWritten(Runnable action) {
            action.run();
        }

        @Override
        public void remove(long sequence, long location) {
            removed.add(new long[] {sequence, location});
        }

        @Override
        public void deleted() {
            deleted = true;
        }

        @Override
        public void stopped(long[] deliveredBefore, int count) {
        }
    }

    private final MemoryPages pages = new MemoryPages();

    private ClassicQueue queue(boolean durable, Map<String, Object> arguments, QueueLog log, QueueContext context) {
        return new ClassicQueue(QueueDeclaration.of("q", durable, arguments), QueueExecutor.CALLER_THREAD, log, LIMIT,
            context, pages);
    }

    private ClassicQueue queue(Map<String, Object> arguments) {
        return queue(false, arguments, null, QueueContext.DEFAULT);
    }

    /** A message whose body is {@code text}, with a header when it has a priority. */
    private static Message message(String text, int priority) {
        ByteBuf bytes = Unpooled.buffer();
        if (priority >= 0) {
            Header header = new Header();
            header.setDurable(true);
            header.setPriority(UnsignedByte.valueOf((byte) priority));
            ProtonCodec.current().encode(header, bytes);
        }
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        bytes.writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) utf8.length}).writeBytes(utf8);
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static String body(Message message) {
        String s = new String(ByteBufUtil.getBytes(message.toAmqp10().bytes()), StandardCharsets.ISO_8859_1);
        return s.substring(s.lastIndexOf((char) 0xa0) + 2);
    }

    private static String name(int i) {
        return String.format("m%04d", i);
    }

    private static List<String> names(int from, int to) {
        List<String> names = new ArrayList<>();
        for (int i = from; i < to; i++) {
            names.add(name(i));
        }
        return names;
    }

    /** Publishes m{from}..m{to-1}; returns how many were refused. */
    private static int publish(ClassicQueue queue, int from, int to) {
        int[] refused = new int[1];
        for (int i = from; i < to; i++) {
            queue.publish(message(name(i), -1), new PublishConfirm() {
                @Override
                public void run() {
                }

                @Override
                public void refused() {
                    refused[0]++;
                }
            });
        }
        return refused[0];
    }

    /** Takes up to {@code count} messages, accepts them, returns their bodies. */
    private static List<String> consume(ClassicQueue queue, int count) {
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, count, false, false);
        List<String> bodies = new ArrayList<>();
        for (QueueDelivery d : List.copyOf(sink.deliveries)) {
            bodies.add(body(d.message()));
            d.message().release();
            queue.settle(consumer, d.tag(), d.tag(), Outcome.ACCEPTED);
        }
        queue.unsubscribe(consumer, Outcome.RELEASED);
        return bodies;
    }

    @Test
    void aBacklogPastTheLimitKeepsNoEntryInMemoryAndComesBackInOrder() {
        ClassicQueue queue = queue(Map.of());
        publish(queue, 0, 1000);
        assertThat(queue.readyCount()).isEqualTo(1000);
        assertThat(pages.held()).as("all but the head are paged").isGreaterThanOrEqualTo(985);
        assertThat(queue.memoryBytes()).isLessThanOrEqualTo(LIMIT);

        assertThat(consume(queue, 300)).containsExactlyElementsOf(names(0, 300));
        publish(queue, 1000, 1200); // after the tail, not ahead of it
        assertThat(consume(queue, 2000)).containsExactlyElementsOf(names(300, 1200));
        assertThat(pages.held()).isZero();
        assertThat(queue.readyCount()).isZero();
        assertThat(queue.memoryBytes()).isZero();
    }

    /** Message {@code i} with a body of {@code size} bytes: its name, then filler (a {@code data} section, vbin32). */
    private static Message large(int i, int size) {
        byte[] body = new byte[size];
        java.util.Arrays.fill(body, (byte) 'x');
        byte[] name = name(i).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(name, 0, body, 0, name.length);
        ByteBuf bytes = Unpooled.buffer().writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xb0}).writeInt(size)
            .writeBytes(body);
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void largeMessagesAreReadBackNoFurtherThanTheMemoryLimit() {
        // issue 30: a batch of 256 read back at once was 256 MiB of 1 MiB messages, past a 512 MiB heap's room
        ClassicQueue queue = queue(Map.of());
        int size = 1000; // four fill the limit
        for (int i = 0; i < 100; i++) {
            queue.publish(large(i, size), () -> { });
        }
        assertThat(pages.held()).as("all but the head are paged").isGreaterThanOrEqualTo(95);
        for (int i = 0; i < 100; i++) {
            RecordingSink sink = new RecordingSink();
            QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
            queue.flow(consumer, 0, 1, false, false);
            QueueDelivery delivery = sink.deliveries.get(0);
            String body = new String(ByteBufUtil.getBytes(delivery.message().toAmqp10().bytes()),
                StandardCharsets.US_ASCII);
            assertThat(body.substring(8, 13)).isEqualTo(name(i));
            delivery.message().release();
            queue.settle(consumer, delivery.tag(), delivery.tag(), Outcome.ACCEPTED);
            queue.unsubscribe(consumer, Outcome.RELEASED);
            assertThat(queue.memoryBytes()).as("in memory after %d taken", i + 1)
                .isLessThanOrEqualTo(LIMIT + size + 8);
        }
        assertThat(queue.readyCount()).isZero();
        assertThat(pages.held()).isZero();
    }

    @Test
    void anArrivalAConsumerHasCreditForIsDeliveredNotPaged() {
        // issue 30: publishes arrive in batches and dispatch once after the batch; with messages as large as the
        // limit, every one after the first of a batch was paged, then read back for the consumer that had credit
        TurnExecutor turns = new TurnExecutor();
        ClassicQueue queue = new ClassicQueue(QueueDeclaration.of("q", false, Map.of()), turns, null, LIMIT,
            QueueContext.DEFAULT, pages);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 4, false, false);
        turns.endTurn();
        for (int i = 0; i < 6; i++) { // one turn: four have credit, two wait (one in memory, one paged)
            queue.publish(large(i, (int) LIMIT), () -> { });
        }
        turns.endTurn();
        assertThat(sink.deliveries).hasSize(4);
        assertThat(pages.lanes.values().stream().mapToInt(f -> f.appends).sum()).as("messages paged").isEqualTo(1);
        for (QueueDelivery d : List.copyOf(sink.deliveries)) {
            d.message().release();
        }
        queue.delete();
    }

    @Test
    void eachPriorityLanePagesItsOwnTail() {
        ClassicQueue queue = queue(Map.of("x-max-priority", 3L));
        List<List<String>> byPriority = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
            new ArrayList<>());
        for (int i = 0; i < 400; i++) {
            int priority = (i * 7) % 5; // 4 is capped to 3
            queue.publish(message(name(i), priority), () -> { });
            byPriority.get(Math.min(priority, 3)).add(name(i));
        }
        assertThat(pages.lanes.keySet()).containsExactlyInAnyOrder(0, 1, 2, 3);
        List<String> expected = new ArrayList<>();
        for (int p = 3; p >= 0; p--) {
            expected.addAll(byPriority.get(p));
        }
        assertThat(consume(queue, 400)).containsExactlyElementsOf(expected);
    }

    @Test
    void givenBackMessagesKeepTheirPlaceAheadOfTheTail() {
        ClassicQueue queue = queue(Map.of());
        publish(queue, 0, 200);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 50, false, false);
        assertThat(sink.deliveries).hasSize(50);
        queue.flow(consumer, 50, 0, false, false);
        sink.releaseAll();
        queue.settle(consumer, 0, 9, Outcome.MODIFIED_FAILED); // m0..m9 back, failed once
        queue.settle(consumer, 10, 49, Outcome.RELEASED);
        assertThat(queue.readyCount()).isEqualTo(200);

        queue.flow(consumer, 50, 200, false, false);
        List<String> got = new ArrayList<>();
        for (QueueDelivery d : sink.deliveries) {
            String b = body(d.message());
            got.add(b);
            assertThat(d.deliveryCount()).as(b).isEqualTo(b.compareTo(name(10)) < 0 ? 1 : 0);
            assertThat(d.firstAcquirer()).as(b).isEqualTo(b.compareTo(name(50)) >= 0);
        }
        sink.releaseAll();
        queue.settle(consumer, 50, 249, Outcome.ACCEPTED);
        assertThat(got).containsExactlyElementsOf(names(0, 200));
        assertThat(queue.readyCount()).isZero();
        queue.unsubscribe(consumer, Outcome.RELEASED);
    }

    @Test
    void lengthLimitsCountTheTailExactly() {
        Message sample = message(name(0), -1);
        long bodySize = sample.bodySize();
        sample.release();
        // room for 100 bodies
        ClassicQueue rejecting = queue(Map.of("x-max-length-bytes", 100 * bodySize, "x-overflow", "reject-publish"));
        assertThat(publish(rejecting, 0, 150)).as("refused past 100 bodies").isEqualTo(50);
        assertThat(rejecting.readyCount()).isEqualTo(100);
        assertThat(consume(rejecting, 1000)).containsExactlyElementsOf(names(0, 100));

        ClassicQueue dropping = queue(Map.of("x-max-length", 50L));
        publish(dropping, 0, 200);
        assertThat(dropping.readyCount()).isEqualTo(50);
        assertThat(consume(dropping, 1000)).as("the oldest dropped, from the head").containsExactlyElementsOf(
            names(150, 200));
    }

    @Test
    void purgeAndDeleteDropTheTailAndTellTheLogWhatLeft() {
        RecordingLog log = new RecordingLog();
        ClassicQueue queue = queue(true, Map.of(), log, QueueContext.DEFAULT);
        publish(queue, 0, 100);
        assertThat(pages.held()).isGreaterThan(80);
        assertThat(queue.purge().join()).isEqualTo(100);
        assertThat(pages.held()).isZero();
        assertThat(log.removed).as("one removal per message, paged or not").hasSize(100);
        assertThat(log.removed.stream().mapToLong(r -> r[0]).sorted().toArray())
            .containsExactly(java.util.stream.LongStream.range(0, 100).toArray());
        assertThat(queue.readyCount()).isZero();

        publish(queue, 100, 200);
        assertThat(consume(queue, 5)).containsExactlyElementsOf(names(100, 105));
        assertThat(queue.delete().join()).isEqualTo(95);
        assertThat(log.deleted).isTrue();
        assertThat(log.removed).as("a deleted queue's messages go with one record").hasSize(105);
        assertThat(pages.deleted).isTrue();
        assertThat(pages.held()).isZero();
    }

    @Test
    void messagesReadBackExpireAtTheHeadOnTheirOwnTime() {
        ManualClock clock = new ManualClock(0);
        ClassicQueue queue = queue(false, Map.of("x-message-ttl", 1000L), null,
            new QueueContext("/", clock, DeadLetters.NONE, true));
        publish(queue, 0, 100);
        clock.advance(500);
        publish(queue, 100, 200);
        assertThat(pages.held()).isGreaterThan(180);

        clock.advance(600); // t=1100: the first hundred, mostly on disk, are due; the timer fires
        assertThat(queue.readyCount()).isEqualTo(100);
        assertThat(queue.counts().join().ready()).isEqualTo(100);
        clock.advance(300); // t=1400: the rest expire at 1500
        assertThat(consume(queue, 10)).containsExactlyElementsOf(names(100, 110));
        clock.advance(100);
        assertThat(queue.readyCount()).isZero();
        assertThat(pages.held()).isZero();
    }

    @Test
    void compactionCopiesPagedMessagesForwardAndTheirAcksFollow() {
        RecordingLog log = new RecordingLog();
        ClassicQueue queue = queue(true, Map.of(), log, QueueContext.DEFAULT);
        publish(queue, 0, 50); // locations 0..49
        assertThat(queue.relocate(30).join()).isEqualTo(30);
        assertThat(log.relocated).containsExactlyInAnyOrderElementsOf(
            java.util.stream.LongStream.range(0, 30).boxed().toList());
        assertThat(consume(queue, 50)).containsExactlyElementsOf(names(0, 50));
        for (long[] removed : log.removed) {
            assertThat(removed[1]).as("message %d acked at its new location", removed[0])
                .isEqualTo(removed[0] < 30 ? 50 + log.relocated.indexOf(removed[0]) : removed[0]);
        }
    }

    @Test
    void aTailThatCannotBeReadIsDroppedAndCountedOut() {
        ClassicQueue queue = queue(Map.of());
        publish(queue, 0, 100);
        pages.lanes.get(0).failReads = true;
        List<String> got = consume(queue, 100);
        assertThat(got).isNotEmpty().containsExactlyElementsOf(names(0, got.size()));
        assertThat(queue.readyCount()).isZero();
        pages.lanes.get(0).failReads = false;
        publish(queue, 100, 150);
        assertThat(consume(queue, 100)).containsExactlyElementsOf(names(100, 150));
    }
}
