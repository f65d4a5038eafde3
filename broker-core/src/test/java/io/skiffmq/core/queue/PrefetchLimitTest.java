package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.body;
import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A channel-wide prefetch limit shared by queues: what it counts (deliveries out when a consumer is attached, not
 * those of pre-settled consumers), the line of consumers waiting for a slot, and many queues on threads of their own.
 */
@ExtendWith(LeakDetection.class)
class PrefetchLimitTest {
    private static void publish(ClassicQueue queue, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            queue.publish(text(prefix + i, queue.name()), null);
        }
    }

    private static List<String> bodies(RecordingSink sink) {
        return sink.deliveries.stream().map(d -> body(d.message())).toList();
    }

    @Test
    void aFreedSlotGoesToTheFirstInLineNotToTheConsumerWhoseQueueFreedIt() {
        ClassicQueue q1 = new ClassicQueue("q1", QueueExecutor.CALLER_THREAD);
        ClassicQueue q2 = new ClassicQueue("q2", QueueExecutor.CALLER_THREAD);
        PrefetchLimit channel = new PrefetchLimit(1);
        publish(q1, "a", 3);
        publish(q2, "b", 3);
        RecordingSink first = new RecordingSink();
        RecordingSink second = new RecordingSink();
        QueueConsumer a = q1.subscribe(first, ConsumerFlow.prefetch(0, channel), false);
        QueueConsumer b = q2.subscribe(second, ConsumerFlow.prefetch(0, channel), false);
        // a0 went; a waits for a slot for a1, then b for b0
        assertThat(bodies(first)).containsExactly("a0");
        assertThat(second.deliveries).isEmpty();
        q1.settle(a, 0, 0, Outcome.ACCEPTED);
        assertThat(bodies(first)).as("a was first in line").containsExactly("a0", "a1");
        q1.settle(a, 1, 1, Outcome.ACCEPTED);
        assertThat(bodies(second)).as("b waited longer than a's next").containsExactly("b0");
        assertThat(first.deliveries).hasSize(2);
        q2.settle(b, 0, 0, Outcome.ACCEPTED);
        assertThat(bodies(first)).containsExactly("a0", "a1", "a2");
        q1.settle(a, 2, 2, Outcome.ACCEPTED);
        assertThat(bodies(second)).containsExactly("b0", "b1");
        q1.unsubscribe(a, Outcome.ACCEPTED);
        q2.unsubscribe(b, Outcome.ACCEPTED);
        assertThat(channel.inFlight()).isZero();
        first.releaseAll();
        second.releaseAll();
        q2.purge();
    }

    @Test
    void aConsumerAttachedLaterBringsItsUnsettledDeliveriesAndPreSettledOnesOnlyWait() {
        ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD);
        ClassicQueue other = new ClassicQueue("other", QueueExecutor.CALLER_THREAD);
        publish(queue, "m", 5);
        RecordingSink acked = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(acked, ConsumerFlow.prefetch(2, null), false);
        RecordingSink autoAck = new RecordingSink();
        QueueConsumer noAck = other.subscribe(autoAck, ConsumerFlow.credit(), true);
        other.flow(noAck, 0, 100, false, false);
        PrefetchLimit channel = new PrefetchLimit(2);
        queue.limit(consumer, channel).join();
        other.limit(noAck, channel).join();
        assertThat(channel.inFlight()).as("the two unsettled ones").isEqualTo(2);

        publish(other, "n", 2);
        assertThat(autoAck.deliveries).as("the channel is at its limit: no-ack consumers wait too").isEmpty();
        queue.settle(consumer, 0, 0, Outcome.ACCEPTED);
        assertThat(bodies(autoAck)).as("first in line, and no-ack deliveries take no slot").containsExactly("n0", "n1");
        assertThat(bodies(acked)).containsExactly("m0", "m1", "m2");
        queue.settle(consumer, 1, 2, Outcome.ACCEPTED);
        assertThat(bodies(acked)).containsExactly("m0", "m1", "m2", "m3", "m4");
        assertThat(channel.inFlight()).isEqualTo(2);
        queue.unsubscribe(consumer, Outcome.ACCEPTED);
        assertThat(channel.inFlight()).isZero();
        acked.releaseAll();
        autoAck.releaseAll();
    }

    /** A queue's thread of its own, as an event loop is to the queues it owns. */
    private static final class ThreadExecutor implements QueueExecutor {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        volatile Thread owner;

        ThreadExecutor() {
            thread.execute(() -> owner = Thread.currentThread());
        }

        @Override
        public boolean inExecutor() {
            return Thread.currentThread() == owner;
        }

        @Override
        public void execute(Runnable task) {
            thread.execute(task);
        }
    }

    /**
     * Queues on five threads, one with a no-ack consumer, the others' deliveries settled from two more threads as
     * soon as they come: the channel never has more than its limit out, and every message gets through (no consumer
     * is left waiting while there is room).
     */
    @RepeatedTest(10) // interleavings differ from run to run
    void queuesOnTheirOwnThreadsNeverPassTheLimitAndNoneIsLeftWaiting() throws Exception {
        int queues = 5; // the last one's consumer is no-ack
        int perQueue = 2000;
        int max = 3;
        PrefetchLimit channel = new PrefetchLimit(max);
        AtomicInteger out = new AtomicInteger();
        AtomicInteger mostOut = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(queues * perQueue);
        ExecutorService settlers = Executors.newFixedThreadPool(2);
        List<ThreadExecutor> threads = new ArrayList<>();
        List<ClassicQueue> made = new ArrayList<>();
        try {
            for (int q = 0; q < queues; q++) {
                ThreadExecutor thread = new ThreadExecutor();
                threads.add(thread);
                ClassicQueue queue = new ClassicQueue("q" + q, thread);
                made.add(queue);
                QueueConsumer[] consumer = new QueueConsumer[1];
                boolean noAck = q == queues - 1;
                ConsumerSink sink = new ConsumerSink() {
                    @Override
                    public void deliver(QueueDelivery delivery) {
                        delivery.message().release();
                        if (noAck) {
                            all.countDown();
                            return;
                        }
                        mostOut.accumulateAndGet(out.incrementAndGet(), Math::max);
                        settlers.execute(() -> {
                            out.decrementAndGet();
                            all.countDown();
                            queue.settle(consumer[0], delivery.tag(), delivery.tag(), Outcome.ACCEPTED);
                        });
                    }

                    @Override
                    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
                    }

                    @Override
                    public void queueDeleted() {
                    }
                };
                if (noAck) {
                    consumer[0] = queue.subscribe(sink, ConsumerFlow.credit(channel), true);
                    queue.flow(consumer[0], 0, perQueue, false, false);
                } else {
                    consumer[0] = queue.subscribe(sink, ConsumerFlow.prefetch(0, channel), false);
                }
            }
            for (ClassicQueue queue : made) {
                publish(queue, "m", perQueue);
            }
            boolean done = all.await(60, TimeUnit.SECONDS);
            assertThat(done).as(() -> "every message delivered and settled; left: " + all.getCount() + ", " + channel
                + ", ready: " + made.stream().map(q -> q.name() + "=" + q.readyCount()).toList()).isTrue();
            assertThat(mostOut.get()).isLessThanOrEqualTo(max);
        } finally {
            settlers.shutdown();
            threads.forEach(t -> t.thread.shutdown());
            for (ThreadExecutor thread : threads) {
                thread.thread.awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }
}
