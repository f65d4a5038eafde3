package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.body;
import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The neutral consumer API: credit and prefetch pacing, range settlement, pull gets, auto-delete, deletion. */
@ExtendWith(LeakDetection.class)
class ClassicQueueConsumerTest {
    private final ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD);

    private void publish(int count) {
        for (int i = 0; i < count; i++) {
            queue.publish(text("m" + i, "q"), null);
        }
    }

    private static List<String> bodies(RecordingSink sink) {
        return sink.deliveries.stream().map(d -> body(d.message())).toList();
    }

    @Test
    void prefetchBoundsUnsettledDeliveriesAndSettlementMakesRoom() {
        publish(5);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.prefetch(2, null), false);
        assertThat(bodies(sink)).containsExactly("m0", "m1");

        queue.settle(consumer, 0, 0, Outcome.ACCEPTED);
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2");
        queue.settle(consumer, 1, 2, Outcome.ACCEPTED);
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2", "m3", "m4");
        assertThat(sink.deliveries).extracting(QueueDelivery::tag).containsExactly(0L, 1L, 2L, 3L, 4L);
        queue.unsubscribe(consumer, Outcome.RELEASED);
        assertThat(queue.readyCount()).as("m3 and m4 were unsettled, so they are back").isEqualTo(2);
        sink.releaseAll();
        queue.purge();
    }

    @Test
    void consumersUnsubscribedTogetherGiveTheirDeliveriesBackInTheirOriginalOrder() {
        publish(5);
        RecordingSink first = new RecordingSink();
        RecordingSink second = new RecordingSink();
        QueueConsumer a = queue.subscribe(first, ConsumerFlow.prefetch(2, null), false);
        QueueConsumer b = queue.subscribe(second, ConsumerFlow.prefetch(2, null), false);
        assertThat(bodies(first)).containsExactly("m0", "m1");
        assertThat(bodies(second)).containsExactly("m2", "m3");
        RecordingSink waiting = new RecordingSink();
        queue.subscribe(waiting, ConsumerFlow.prefetch(0, null), true);
        assertThat(bodies(waiting)).containsExactly("m4");

        // one by one, the second's would go out before the first's were back
        queue.unsubscribe(List.of(b, a), Outcome.RELEASED);
        assertThat(bodies(waiting)).containsExactly("m4", "m0", "m1", "m2", "m3");
        assertThat(waiting.deliveries.subList(1, 5)).noneMatch(QueueDelivery::firstAcquirer);
        first.releaseAll();
        second.releaseAll();
        waiting.releaseAll();
    }

    @Test
    void channelLimitIsSharedAcrossQueuesAndWakesTheWaiting() {
        ClassicQueue other = new ClassicQueue("other", QueueExecutor.CALLER_THREAD);
        PrefetchLimit channel = new PrefetchLimit(3);
        publish(3);
        other.publish(text("o0", "other"), null);
        RecordingSink first = new RecordingSink();
        RecordingSink second = new RecordingSink();
        QueueConsumer a = queue.subscribe(first, ConsumerFlow.prefetch(0, channel), false);
        QueueConsumer b = other.subscribe(second, ConsumerFlow.prefetch(0, channel), false);
        assertThat(bodies(first)).containsExactly("m0", "m1", "m2");
        assertThat(second.deliveries).as("the channel is at its limit").isEmpty();
        assertThat(other.readyCount()).isEqualTo(1);

        queue.settle(a, 1, 1, Outcome.ACCEPTED);
        assertThat(bodies(second)).as("a slot freed on one queue wakes the other").containsExactly("o0");
        assertThat(channel.inFlight()).isEqualTo(3);

        channel.limit(0);
        queue.unsubscribe(a, Outcome.ACCEPTED);
        other.unsubscribe(b, Outcome.ACCEPTED);
        assertThat(channel.inFlight()).isZero();
        first.releaseAll();
        second.releaseAll();
    }

    @Test
    void rangeReleaseRedeliversInlineToTheSameConsumer() {
        publish(5);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 10, false, false);
        assertThat(sink.deliveries).hasSize(5).allMatch(QueueDelivery::firstAcquirer);

        // given back as one range while the consumer still has credit: redelivered at once, in order
        queue.settle(consumer, 0, 4, Outcome.RELEASED);
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2", "m3", "m4", "m0", "m1", "m2", "m3", "m4");
        assertThat(sink.deliveries.subList(5, 10)).extracting(QueueDelivery::tag).containsExactly(5L, 6L, 7L, 8L, 9L);
        assertThat(sink.deliveries.subList(5, 10)).noneMatch(QueueDelivery::firstAcquirer);

        queue.settle(consumer, 0, 100, Outcome.ACCEPTED);
        queue.unsubscribe(consumer, Outcome.RELEASED);
        assertThat(queue.readyCount()).isZero();
        sink.releaseAll();
    }

    @Test
    void modifiedRangeCountsFailedDeliveries() {
        publish(2);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, 2, false, false);
        queue.settle(consumer, 0, 1, Outcome.MODIFIED_FAILED);
        queue.flow(consumer, 2, 2, false, false);
        assertThat(sink.deliveries.subList(2, 4)).extracting(QueueDelivery::deliveryCount).containsExactly(1L, 1L);
        queue.unsubscribe(consumer, Outcome.REJECTED);
        assertThat(queue.readyCount()).isZero();
        sink.releaseAll();
    }

    @Test
    void getTakesTheOldestAndIsSettledLikeADelivery() {
        publish(3);
        RecordingSink sink = new RecordingSink();
        QueueConsumer puller = queue.subscribe(sink, ConsumerFlow.pull(), false);
        assertThat(sink.deliveries).as("nothing is pushed to a pull consumer").isEmpty();
        assertThat(queue.consumerCount()).isZero();

        QueueDelivery first = queue.get(puller).join();
        assertThat(body(first.message())).isEqualTo("m0");
        assertThat(first.remaining()).isEqualTo(2);
        QueueDelivery second = queue.get(puller).join();
        assertThat(second.tag()).isEqualTo(1);
        queue.settle(puller, 0, 0, Outcome.ACCEPTED);
        queue.settle(puller, 1, 1, Outcome.RELEASED);
        QueueDelivery again = queue.get(puller).join();
        assertThat(body(again.message())).isEqualTo("m1");
        assertThat(again.firstAcquirer()).isFalse();

        QueueConsumer noAck = queue.subscribe(new RecordingSink(), ConsumerFlow.pull(), true);
        QueueDelivery last = queue.get(noAck).join();
        assertThat(body(last.message())).isEqualTo("m2");
        assertThat(queue.get(noAck).join()).as("empty").isNull();
        for (QueueDelivery d : List.of(first, second, again, last)) {
            d.message().release();
        }
        queue.unsubscribe(puller, Outcome.RELEASED);
        assertThat(queue.readyCount()).isEqualTo(1);
        queue.purge();
    }

    @Test
    void autoDeleteRunsWhenTheLastPushConsumerLeaves() {
        ClassicQueue auto = new ClassicQueue(new QueueDeclaration("auto", false, false, true, Map.of()),
            QueueExecutor.CALLER_THREAD, null, Long.MAX_VALUE, QueueContext.DEFAULT);
        AtomicInteger unused = new AtomicInteger();
        auto.whenUnused(unused::incrementAndGet);
        QueueConsumer puller = auto.subscribe(new RecordingSink(), ConsumerFlow.pull(), false);
        auto.unsubscribe(puller, Outcome.RELEASED);
        assertThat(unused).as("a queue that never had a consumer stays").hasValue(0);

        QueueConsumer a = auto.subscribe(new RecordingSink(), ConsumerFlow.credit(), false);
        QueueConsumer b = auto.subscribe(new RecordingSink(), ConsumerFlow.credit(), false);
        auto.unsubscribe(a, Outcome.RELEASED);
        assertThat(unused).hasValue(0);
        auto.unsubscribe(b, Outcome.RELEASED);
        assertThat(unused).hasValue(1);
    }

    @Test
    void deletionTellsEveryConsumer() {
        publish(2);
        RecordingSink pushed = new RecordingSink();
        RecordingSink pulling = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(pushed, ConsumerFlow.credit(), false);
        queue.subscribe(pulling, ConsumerFlow.pull(), false);
        queue.flow(consumer, 0, 1, false, false);
        assertThat(queue.delete().join()).as("the ready one counts, not the unsettled one").isEqualTo(1);
        assertThat(pushed.queueDeleted).isTrue();
        assertThat(pulling.queueDeleted).isTrue();
        queue.settle(consumer, 0, 0, Outcome.RELEASED);
        queue.publish(text("late", "q"), null);
        assertThat(queue.readyCount()).isZero();
        pushed.releaseAll();
    }

    @Test
    void publishesAndSettlementsDispatchOnceAfterTheTurn() {
        TurnExecutor turns = new TurnExecutor();
        ClassicQueue batched = new ClassicQueue("batched", turns);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = batched.subscribe(sink, ConsumerFlow.prefetch(2, null), false);
        for (int i = 0; i < 3; i++) {
            batched.publish(text("m" + i, "batched"), null);
        }
        assertThat(sink.deliveries).as("no dispatch per publish").isEmpty();
        assertThat(turns.waiting()).as("one dispatch asked for the three").isEqualTo(1);
        turns.endTurn();
        assertThat(bodies(sink)).containsExactly("m0", "m1");

        batched.settle(consumer, 0, 0, Outcome.ACCEPTED);
        batched.settle(consumer, 1, 1, Outcome.ACCEPTED);
        assertThat(turns.waiting()).isEqualTo(1);
        turns.endTurn();
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2");
        batched.unsubscribe(consumer, Outcome.ACCEPTED);
        sink.releaseAll();
    }

    @Test
    void creditDispatchesAtOnceSoDeliveriesPrecedeTheEchoTheyAccountFor() {
        TurnExecutor turns = new TurnExecutor();
        ClassicQueue batched = new ClassicQueue("batched", turns);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = batched.subscribe(sink, ConsumerFlow.credit(), false);
        batched.publish(text("m0", "batched"), null);
        batched.flow(consumer, 0, 5, false, true);
        assertThat(bodies(sink)).as("delivered before the turn ends").containsExactly("m0");
        assertThat(sink.creditStates).hasSize(1);
        assertThat(sink.creditStates.get(0)[1]).as("the echo counts the delivery").isEqualTo(4);
        turns.endTurn();
        assertThat(sink.deliveries).hasSize(1);
        batched.unsubscribe(consumer, Outcome.ACCEPTED);
        sink.releaseAll();
    }
}
