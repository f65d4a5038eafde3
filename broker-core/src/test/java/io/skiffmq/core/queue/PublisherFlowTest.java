package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.TestMessages;
import io.skiffmq.core.time.ManualClock;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * When a queue holds its publishers back ({@link PublisherFlow}): only while consumers that keep taking would drain
 * its backlog within two seconds at their best rate of the last one, never for stalled or slow consumers, and every
 * waiting publisher is let go.
 */
@ExtendWith(LeakDetection.class)
class PublisherFlowTest {
    private static final long LIMIT = 4000;
    private final ManualClock clock = new ManualClock(0);
    private final AtomicInteger resumed = new AtomicInteger();
    private final Runnable resume = resumed::incrementAndGet;

    /** A queue's flow whose consumers took their first message just now (so a rate window is open). */
    private PublisherFlow flow(boolean enabled) {
        PublisherFlow flow = new PublisherFlow(QueueExecutor.CALLER_THREAD, clock, LIMIT, enabled);
        flow.dispatched(1);
        return flow;
    }

    /** Consumers take {@code perWindow} messages in each of the next {@code windows} rate windows. */
    private void taking(PublisherFlow flow, int perWindow, int windows) {
        for (int i = 0; i < windows; i++) {
            clock.advance(PublisherFlow.RATE_WINDOW_MILLIS);
            flow.dispatched(perWindow);
        }
    }

    @Test
    void fastConsumersBehindABacklogPastHalfTheLimitHoldPublishersUntilItIsUnderAQuarter() {
        PublisherFlow flow = flow(true);
        taking(flow, 1000, 2); // 10,000 a second
        flow.update(LIMIT / 2 - 1, 5000, true);
        assertThat(flow.holding()).as("under half the limit").isFalse();
        assertThat(flow.await(resume)).isFalse();

        flow.update(LIMIT / 2, 5000, true); // drained in half a second
        assertThat(flow.holding()).isTrue();
        assertThat(flow.await(resume)).isTrue();
        assertThat(flow.await(resume)).isTrue();
        flow.update(LIMIT / 4, 5000, true);
        assertThat(flow.holding()).as("over a quarter still").isTrue();
        assertThat(resumed).hasValue(0);

        flow.update(LIMIT / 4 - 1, 5000, true);
        assertThat(flow.holding()).isFalse();
        assertThat(resumed).as("every waiting publisher let go, once").hasValue(2);
        assertThat(flow.await(resume)).isFalse();
    }

    @Test
    void slowConsumersDoNotHoldPublishersTheQueueBuffersForThem() {
        PublisherFlow flow = flow(true);
        taking(flow, 2, 5); // 20 a second: 5,000 waiting would take minutes
        flow.update(LIMIT, 5000, true);
        assertThat(flow.holding()).isFalse();
        assertThat(flow.await(resume)).isFalse();
    }

    @Test
    void consumersThatSlowDownWhileHoldingLetPublishersGoOnceTheBacklogWouldTakeTwiceTheDrainTime() {
        PublisherFlow flow = flow(true);
        taking(flow, 1000, 1);
        flow.update(LIMIT, 19_000, true); // 1.9 s at 10,000 a second
        assertThat(flow.await(resume)).isTrue();
        taking(flow, 300, PublisherFlow.WINDOWS - 1); // 3,000 a second now, but the best of the last second is kept
        flow.update(LIMIT, 19_000, true);
        assertThat(flow.holding()).isTrue();
        taking(flow, 500, 1); // the 10,000 is over a second old: 5,000 a second is the best, 3.8 s
        flow.update(LIMIT, 19_000, true);
        assertThat(flow.holding()).isTrue();
        taking(flow, 400, PublisherFlow.WINDOWS); // 4,000 a second at best: 4.75 s
        flow.update(LIMIT, 19_000, true);
        assertThat(flow.holding()).isFalse();
        assertThat(resumed).hasValue(1);
    }

    @Test
    void consumersThatStopLetWaitingPublishersGoWithinTheRecheckWithNoDispatch() {
        PublisherFlow flow = flow(true);
        taking(flow, 1000, 1);
        flow.update(LIMIT, 100, true);
        assertThat(flow.await(resume)).isTrue();
        assertThat(clock.pendingTimers()).as("a recheck is armed").isEqualTo(1);
        clock.advance(PublisherFlow.STALL_MILLIS - PublisherFlow.RECHECK_MILLIS);
        assertThat(resumed).as("consumers may still take").hasValue(0);

        clock.advance(PublisherFlow.RECHECK_MILLIS); // nothing taken for STALL_MILLIS
        assertThat(resumed).hasValue(1);
        assertThat(clock.pendingTimers()).as("nobody waits: no more rechecks").isZero();
        assertThat(flow.await(resume)).as("stalled consumers hold nobody").isFalse();
    }

    @Test
    void noConsumersNoHoldAndSwitchedOffNeverHolds() {
        PublisherFlow flow = flow(true);
        taking(flow, 1000, 1);
        flow.update(LIMIT, 100, false);
        assertThat(flow.holding()).isFalse();

        PublisherFlow off = flow(false);
        taking(off, 1000, 1);
        off.update(Long.MAX_VALUE - 1, 100, true);
        assertThat(off.holding()).isFalse();
    }

    @Test
    void aClassicQueueHoldsItsPublishersWhileItsConsumerKeepsTakingAndReleasesThemWhenItIsDeleted() {
        ClassicQueue queue = new ClassicQueue(QueueDeclaration.of("q", false, Map.of()), QueueExecutor.CALLER_THREAD,
            null, 64 * 1024, new QueueContext("/", clock, DeadLetters.NONE, true), new MemoryPages());
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        int published = 0;
        int settled = 0;
        // the consumer takes 100 every rate window, the publisher brings more: the backlog grows past 32 KiB
        while (!queue.holdsPublishers() && published < 10_000) {
            clock.advance(PublisherFlow.RATE_WINDOW_MILLIS);
            for (int i = 0; i < 200; i++, published++) {
                queue.publish(TestMessages.text("m" + published, "q"), null);
            }
            queue.flow(consumer, sink.deliveries.size(), 100, false, false);
            for (; settled < sink.deliveries.size(); settled++) {
                long tag = sink.deliveries.get(settled).tag();
                queue.settle(consumer, tag, tag, Outcome.ACCEPTED);
            }
        }
        assertThat(queue.holdsPublishers()).as("held after %d messages", published).isTrue();
        assertThat(queue.holdPublisher(resume)).isTrue();

        queue.delete().join();
        assertThat(resumed).as("a deleted queue holds nobody").hasValue(1);
        assertThat(queue.holdPublisher(resume)).isFalse();
        sink.releaseAll();
    }

    @Test
    void pageWritesBehindTheDiskHoldPublishersUntilTheyCatchUpWhateverTheSetting() {
        // issue 30: past its bound of unwritten bytes, a queue's thread waited for the disk in the page file; the
        // publishers wait instead, from half of it
        java.util.concurrent.atomic.AtomicBoolean behind = new java.util.concurrent.atomic.AtomicBoolean(true);
        PublisherFlow flow = new PublisherFlow(QueueExecutor.CALLER_THREAD, clock, LIMIT, false, behind::get);
        assertThat(flow.holding()).isTrue();
        assertThat(flow.await(resume)).isTrue();
        clock.advance(PublisherFlow.RECHECK_MILLIS);
        assertThat(resumed).as("still behind").hasValue(0);
        behind.set(false);
        clock.advance(PublisherFlow.RECHECK_MILLIS);
        assertThat(resumed).as("let go by the recheck").hasValue(1);
        assertThat(flow.holding()).isFalse();
        assertThat(flow.await(resume)).isFalse();
    }
}
