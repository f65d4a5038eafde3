package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.body;
import static io.skiffmq.core.TestMessages.text;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Paging against a log whose writer the test drives: a message leaves memory only once written, is read back when
 * dispatched, and a paged message copied forward (compaction) is never read from a copy not yet written.
 */
@ExtendWith(LeakDetection.class)
class ClassicQueuePagingTest {
    /** Records by location; a location is readable only once {@link #writeAll} has passed it. */
    private static final class SteppedLog implements QueueLog {
        final Map<Long, byte[]> records = new HashMap<>();
        long next;
        long writtenThrough = -1;
        int reads;

        long write(Message message) {
            records.put(next, ByteBufUtil.getBytes(message.toAmqp10().bytes()));
            return next++;
        }

        final List<Runnable> afterWrite = new ArrayList<>();

        void writeAll() {
            writtenThrough = next - 1;
            afterWrite.forEach(Runnable::run);
            afterWrite.clear();
        }

        @Override
        public long publish(long sequence, Message message, long deliveryCount, long expiresAt,
                Runnable durable) {
            durable.run();
            return write(message);
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long expiresAt,
                long location) {
            return write(message);
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount) {
        }

        @Override
        public void remove(long sequence, long location) {
        }

        @Override
        public void deleted() {
        }

        @Override
        public void stopped(long[] deliveredBefore, int count) {
        }

        @Override
        public void whenWritten(Runnable action) {
            afterWrite.add(action);
        }

        @Override
        public boolean isWritten(long location) {
            return location <= writtenThrough;
        }

        @Override
        public Message read(long sequence, long location) {
            if (!isWritten(location)) {
                throw new IllegalStateException("location " + location + " is not written yet");
            }
            reads++;
            return message(records.get(location));
        }
    }

    private static Message message(byte[] bytes) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            return Amqp10Message.of(buf, MessageSections.scan(buf), true, "", "q");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Takes up to {@code count} messages, accepts them, returns their bodies. */
    private static List<String> consume(ClassicQueue queue, int count) {
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        List<QueueDelivery> got = sink.deliveries;
        queue.flow(consumer, 0, count, false, false);
        List<String> bodies = new ArrayList<>();
        for (QueueDelivery d : got) {
            bodies.add(body(d.message()));
            d.message().release();
            queue.settle(consumer, d.tag(), d.tag(), Outcome.ACCEPTED);
        }
        queue.unsubscribe(consumer, Outcome.RELEASED);
        return bodies;
    }

    @Test
    void overTheLimitMessagesLeaveMemoryOnceWrittenAndComeBackInOrder() {
        SteppedLog log = new SteppedLog();
        int size = text("m00", "q").size();
        ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD, true, Map.of(), log, 3L * size);
        for (int i = 0; i < 10; i++) {
            queue.publish(text("m" + i / 10 + i % 10, "q"), () -> { });
        }
        assertThat(queue.memoryBytes()).as("nothing written yet: all in memory").isEqualTo(10L * size);
        log.writeAll();
        queue.publish(text("m10", "q"), () -> { });
        assertThat(queue.memoryBytes()).as("the head within the limit, plus the unwritten newest")
            .isLessThanOrEqualTo(4L * size);

        assertThat(consume(queue, 11)).containsExactly("m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08",
            "m09", "m10");
        assertThat(log.reads).as("paged-out messages were read back").isPositive();
        assertThat(queue.memoryBytes()).isZero();
    }

    @Test
    void aPagedMessageCopiedForwardStaysInMemoryUntilTheCopyIsWritten() {
        SteppedLog log = new SteppedLog();
        int size = text("m00", "q").size();
        ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD, true, Map.of(), log, 0);
        for (int i = 0; i < 5; i++) {
            queue.publish(text("m0" + i, "q"), () -> { });
        }
        log.writeAll();
        queue.publish(text("m05", "q"), () -> { });
        assertThat(queue.memoryBytes()).as("all written ones paged out").isEqualTo(size);

        assertThat(queue.relocate(3).join()).isEqualTo(3);
        assertThat(queue.memoryBytes()).as("read back to be copied").isEqualTo(4L * size);
        log.writeAll();
        assertThat(queue.memoryBytes()).as("paged out again once the copies are written, with no traffic").isZero();

        queue.relocate(8).join();
        // these copies are not written: dispatching must not read them
        assertThat(consume(queue, 6)).containsExactly("m00", "m01", "m02", "m03", "m04", "m05");
    }
}
