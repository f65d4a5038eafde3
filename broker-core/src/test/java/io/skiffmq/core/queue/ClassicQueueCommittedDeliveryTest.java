package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.body;
import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A queue whose log delivers committed messages only (a replicated quorum queue's): nothing goes out to a consumer
 * or a get before the log says it committed it, and what it committed goes out at once, in order.
 */
@ExtendWith(LeakDetection.class)
class ClassicQueueCommittedDeliveryTest {
    /** Confirms nothing by itself; the test commits through a sequence. */
    private static final class CommittingLog implements QueueLog {
        LongConsumer committed;
        final List<Runnable> confirms = new ArrayList<>();

        @Override
        public boolean deliversCommitted(LongConsumer committedThrough) {
            committed = committedThrough;
            return true;
        }

        @Override
        public long publish(long sequence, Message message, long deliveryCount, long expiresAt, Runnable durable) {
            if (durable != null) {
                confirms.add(durable);
            }
            return sequence;
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long expiresAt, long location) {
            return location;
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount) {
        }

        @Override
        public boolean isWritten(long location) {
            return false;
        }

        @Override
        public void whenWritten(Runnable action) {
            action.run();
        }

        @Override
        public Message read(long sequence, long location) {
            throw new AssertionError("kept in memory");
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
    }

    private final CommittingLog log = new CommittingLog();
    private final ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD, true, Map.of(), log,
        Long.MAX_VALUE);

    @Test
    void aConsumerGetsAMessageOnlyOnceItsEnqueueIsCommitted() {
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 10, false, false);
        for (int i = 0; i < 3; i++) {
            queue.publish(text("m" + i, "q"), () -> { });
        }
        assertThat(sink.deliveries).as("nothing committed").isEmpty();
        assertThat(queue.readyCount()).isEqualTo(3);

        log.committed.accept(1);
        assertThat(bodies(sink)).containsExactly("m0", "m1");
        log.committed.accept(2);
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2");
        sink.deliveries.forEach(d -> {
            d.message().release();
            queue.settle(consumer, d.tag(), d.tag(), Outcome.ACCEPTED);
        });
        queue.unsubscribe(consumer, Outcome.RELEASED);
        queue.delete();
    }

    @Test
    void aGetFindsNothingUncommittedAndAReturnedMessageGoesOutAgainAtOnce() {
        queue.publish(text("m0", "q"), () -> { });
        QueueConsumer puller = queue.subscribe(new RecordingSink(), ConsumerFlow.pull(), false);
        assertThat(queue.get(puller).join()).as("not committed").isNull();
        log.committed.accept(0);
        QueueDelivery got = queue.get(puller).join();
        assertThat(body(got.message())).isEqualTo("m0");
        got.message().release();
        queue.publish(text("m1", "q"), () -> { });
        queue.settle(puller, got.tag(), got.tag(), Outcome.RELEASED); // committed before: it may go again

        QueueDelivery again = queue.get(puller).join();
        assertThat(body(again.message())).isEqualTo("m0");
        again.message().release();
        assertThat(queue.get(puller).join()).as("m1 not committed").isNull();
        queue.settle(puller, again.tag(), again.tag(), Outcome.ACCEPTED);
        queue.unsubscribe(puller, Outcome.RELEASED);
        queue.delete();
    }

    private static List<String> bodies(RecordingSink sink) {
        List<String> bodies = new ArrayList<>();
        for (QueueDelivery d : sink.deliveries) {
            bodies.add(body(d.message()));
        }
        return bodies;
    }
}
