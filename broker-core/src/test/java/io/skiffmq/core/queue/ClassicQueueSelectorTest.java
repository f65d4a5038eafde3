package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Message;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Consumers with a selector: they get what they match, oldest first; what they skip stays, in order, for others. */
@ExtendWith(LeakDetection.class)
class ClassicQueueSelectorTest {
    private final ClassicQueue queue = new ClassicQueue("q", QueueExecutor.CALLER_THREAD);
    private final RecordingSink selective = new RecordingSink();
    private final RecordingSink plain = new RecordingSink();

    @AfterEach
    void cleanUp() {
        selective.releaseAll();
        plain.releaseAll();
        queue.purge();
    }

    private void publish(String color, int n) {
        Message m = amqp10(new ApplicationProperties(Map.of("color", color, "n", n)));
        queue.publish(m, null);
    }

    private static List<Object> numbers(RecordingSink sink) {
        return sink.deliveries.stream().map(d -> d.message().header("n")).toList();
    }

    @Test
    void aSelectorConsumerGetsItsMatchesAndLeavesTheRestInOrder() {
        for (int i = 0; i < 10; i++) {
            publish(i % 3 == 0 ? "red" : "blue", i);
        }
        QueueConsumer red = queue.subscribe(selective, ConsumerFlow.credit(), false, false, 0,
            Selector.parse("color = 'red'"));
        queue.flow(red, 0, 100, false, false);
        assertThat(numbers(selective)).containsExactly(0, 3, 6, 9);
        assertThat(queue.readyCount()).isEqualTo(6);

        QueueConsumer any = queue.subscribe(plain, ConsumerFlow.credit(), false);
        queue.flow(any, 0, 100, false, false);
        assertThat(numbers(plain)).containsExactly(1, 2, 4, 5, 7, 8);

        publish("red", 10);
        publish("blue", 11);
        assertThat(numbers(selective)).as("a new red one goes to the selector consumer or the other")
            .hasSizeBetween(4, 5);
        assertThat(numbers(selective).size() + numbers(plain).size()).isEqualTo(12);
        queue.unsubscribe(red, Outcome.ACCEPTED);
        queue.unsubscribe(any, Outcome.ACCEPTED);
    }

    @Test
    void creditIsUsedOnlyByMatchesAndReleasedMatchesComeBackFirst() {
        for (int i = 0; i < 6; i++) {
            publish(i % 2 == 0 ? "red" : "blue", i);
        }
        QueueConsumer red = queue.subscribe(selective, ConsumerFlow.credit(), false, false, 0,
            Selector.parse("color = 'red'"));
        queue.flow(red, 0, 2, false, false);
        assertThat(numbers(selective)).containsExactly(0, 2);
        queue.settle(red, 0, 0, Outcome.RELEASED);
        queue.flow(red, 2, 2, false, false);
        assertThat(numbers(selective)).as("the released one goes again before a later match").containsExactly(0, 2,
            0, 4);
        queue.unsubscribe(red, Outcome.RELEASED);
        QueueConsumer any = queue.subscribe(plain, ConsumerFlow.credit(), false);
        queue.flow(any, 0, 100, false, false);
        assertThat(numbers(plain)).as("unsettled ones return to their places").containsExactly(0, 1, 2, 3, 4, 5);
        queue.unsubscribe(any, Outcome.ACCEPTED);
    }

    @Test
    void aLongBacklogIsScannedAcrossDispatchesAndEachMessageEvaluatedOnce() {
        int skipped = SelectiveDispatch.EVALUATIONS_PER_DISPATCH * 2 + 10;
        for (int i = 0; i < skipped; i++) {
            publish("blue", i);
        }
        publish("red", skipped);
        QueueConsumer red = queue.subscribe(selective, ConsumerFlow.credit(), false, false, 0,
            Selector.parse("color = 'red'"));
        queue.flow(red, 0, 10, false, false);
        assertThat(numbers(selective)).containsExactly(skipped);
        assertThat(red.cursors[0]).as("its cursor is past every blue one").isEqualTo(skipped - 1);
        publish("red", skipped + 1);
        assertThat(numbers(selective)).containsExactly(skipped, skipped + 1);
        assertThat(red.budget).as("the new arrival alone was evaluated")
            .isEqualTo(SelectiveDispatch.EVALUATIONS_PER_DISPATCH - 1);
        queue.unsubscribe(red, Outcome.ACCEPTED);
        assertThat(queue.readyCount()).isEqualTo(skipped);
    }

    @Test
    void givenBackMessagesAreLookedAtAgainOnlyWhenMoreAreGivenBack() {
        for (int i = 0; i < 4; i++) {
            publish("blue", i);
        }
        QueueConsumer any = queue.subscribe(plain, ConsumerFlow.credit(), false);
        queue.flow(any, 0, 4, false, false);
        queue.settle(any, 0, 3, Outcome.RELEASED); // four blue ones back in their places
        QueueConsumer red = queue.subscribe(selective, ConsumerFlow.credit(), false, false, 0,
            Selector.parse("color = 'red'"));
        queue.flow(red, 0, 10, false, false);
        assertThat(red.budget).as("the four given back were looked at")
            .isEqualTo(SelectiveDispatch.EVALUATIONS_PER_DISPATCH - 4);
        publish("red", 4);
        assertThat(numbers(selective)).containsExactly(4);
        assertThat(red.budget).as("only the new arrival: nothing more was given back")
            .isEqualTo(SelectiveDispatch.EVALUATIONS_PER_DISPATCH - 1);
        queue.unsubscribe(red, Outcome.ACCEPTED);
        queue.unsubscribe(any, Outcome.ACCEPTED);
    }

    @Test
    void aPagedTailIsSeenOnlyAsTheHeadDrains() {
        // memory limit 0: every arrival is paged; each lane's head is read back into memory
        ClassicQueue paged = new ClassicQueue(io.skiffmq.core.queue.QueueDeclaration.of("paged", false, Map.of()),
            QueueExecutor.CALLER_THREAD, null, 0, QueueContext.DEFAULT, new MemoryPages());
        QueueConsumer red = paged.subscribe(selective, ConsumerFlow.credit(), false, false, 0,
            Selector.parse("color = 'red'"));
        paged.flow(red, 0, 10, false, false);
        for (int i = 0; i < 3; i++) {
            paged.publish(amqp10(new ApplicationProperties(Map.of("color", i == 0 ? "blue" : "red", "n", i))), null);
        }
        assertThat(selective.deliveries).as("the reds wait in the page file behind the blue head").isEmpty();
        QueueConsumer any = paged.subscribe(plain, ConsumerFlow.credit(), false);
        paged.flow(any, 0, 1, false, false);
        assertThat(numbers(plain)).containsExactly(0);
        assertThat(numbers(selective)).as("read back once the head drained").containsExactly(1, 2);
        paged.unsubscribe(red, Outcome.ACCEPTED);
        paged.unsubscribe(any, Outcome.ACCEPTED);
        paged.purge();
    }

    @Test
    void prefetchAndPriorityLanesWorkWithSelectors() {
        ClassicQueue prio = new ClassicQueue("p", QueueExecutor.CALLER_THREAD, false, Map.of("x-max-priority", 5),
            null, Long.MAX_VALUE);
        for (int i = 0; i < 4; i++) {
            org.apache.qpid.proton.amqp.messaging.Header h = new org.apache.qpid.proton.amqp.messaging.Header();
            h.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) (i % 2 == 0 ? 1 : 5)));
            prio.publish(amqp10(h, new ApplicationProperties(Map.of("n", i))), null);
        }
        QueueConsumer c = prio.subscribe(selective, ConsumerFlow.prefetch(2, null), false, false, 0,
            Selector.parse("n >= 1"));
        assertThat(numbers(selective)).as("high priority first, two at most").containsExactly(1, 3);
        prio.settle(c, 0, 0, Outcome.ACCEPTED);
        assertThat(numbers(selective)).containsExactly(1, 3, 2);
        prio.unsubscribe(c, Outcome.ACCEPTED);
        prio.purge();
    }
}
