package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.metrics.QueueCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What a queue counts as messages come, go out, come back and are acknowledged; and its unacked count. */
@ExtendWith(LeakDetection.class)
class ClassicQueueCountersTest {
    private final ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD);
    private final QueueCounters counters = queue.counters();

    @Test
    void countsPublishesDeliveriesRedeliveriesAndAcks() {
        for (int i = 0; i < 4; i++) {
            queue.publish(text("m" + i, "q"), null);
        }
        assertThat(counters.published()).isEqualTo(4);
        RecordingSink sink = new RecordingSink();
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.prefetch(2, null), false);
        assertThat(counters.deliveredConsumeManualAck()).isEqualTo(2);
        assertThat(queue.unackedCount()).isEqualTo(2);
        assertThat(queue.readyCount()).isEqualTo(2);

        queue.settle(consumer, 0, 0, Outcome.RELEASED); // m0 back, then out again to the same consumer
        assertThat(counters.redelivered()).isEqualTo(1);
        assertThat(counters.acknowledged()).isZero();
        queue.settle(consumer, 1, 2, Outcome.ACCEPTED);
        assertThat(counters.acknowledged()).isEqualTo(2);
        assertThat(queue.unackedCount()).isEqualTo(2);
        assertThat(counters.deliveredConsumeManualAck()).isEqualTo(5);

        queue.unsubscribe(consumer, Outcome.RELEASED);
        assertThat(queue.unackedCount()).isZero();
        assertThat(queue.readyCount()).isEqualTo(2);
        sink.releaseAll();

        QueueConsumer pull = queue.subscribe(new RecordingSink(), ConsumerFlow.pull(), true);
        assertThat(queue.get(pull).join()).satisfies(d -> d.message().release());
        assertThat(queue.get(pull).join()).satisfies(d -> d.message().release());
        assertThat(queue.get(pull).join()).isNull();
        assertThat(counters.deliveredGetAutoAck()).isEqualTo(2);
        assertThat(counters.getEmpty()).isEqualTo(1);
        assertThat(counters.delivered()).isEqualTo(7);
        assertThat(queue.unackedCount()).isZero();
    }
}
