package io.skiffmq.core.queue;

import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.TestMessages;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.VirtualHostStore;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Death;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.time.BrokerClock;
import io.skiffmq.core.time.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The queue arguments' behaviour in the core, on a clock moved by hand: limits, TTL, dead-lettering, and the rest. */
@ExtendWith(LeakDetection.class)
class QueueArgumentsBehaviourTest {
    private static final long START = 1_700_000_000_000L;
    private final ManualClock clock = new ManualClock(START);
    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store(), clock, true);
    private final List<RecordingSink> sinks = new ArrayList<>();

    @AfterEach
    void releaseDeliveries() {
        sinks.forEach(RecordingSink::releaseAll);
        sinks.forEach(sink -> sink.consumer.queue.unsubscribe(sink.consumer, Outcome.ACCEPTED));
        vhost.queues().forEach(Queue::purge);
    }

    /** Where the queues are made: in memory; {@link PagedQueueArgumentsBehaviourTest} pages every message. */
    VirtualHostStore store() {
        return VirtualHostStore.TRANSIENT;
    }

    private Queue declare(String name, Map<String, Object> arguments) {
        return vhost.declareQueue(name, false, arguments);
    }

    private RecordingSink consume(Queue queue, int credit) {
        RecordingSink sink = new RecordingSink();
        sinks.add(sink);
        QueueConsumer consumer = queue.subscribe(sink, ConsumerFlow.credit(), false);
        queue.flow(consumer, 0, credit, false, false);
        sink.consumer = consumer;
        return sink;
    }

    private static Message amqp091(String body, String queue, String expiration, Integer priority) {
        BasicProperties properties = new BasicProperties(null, null, null, 2, priority, null, null, expiration, null,
            null, null, null, null, null);
        Amqp091Message m = TestMessages.amqp091(properties, body.getBytes(StandardCharsets.UTF_8));
        Message routed;
        try {
            routed = Amqp091Message.of(m.propertyBytes().retainedSlice(), m.body().retainedSlice(), "", queue);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        m.release();
        return routed;
    }

    /** A confirm that adds "N confirmed" or "N refused" to {@code outcomes}. */
    private static PublishConfirm recording(List<String> outcomes, int n) {
        return new PublishConfirm() {
            @Override
            public void run() {
                outcomes.add(n + " confirmed");
            }

            @Override
            public void refused() {
                outcomes.add(n + " refused");
            }
        };
    }

    /** The text body of a message made here, whichever its format and whatever was added in front of it. */
    private static String body(Message message) {
        if (message instanceof Amqp091Message m) {
            return m.body().toString(StandardCharsets.UTF_8);
        }
        MessageSections sections = ((Amqp10Message) message).sections();
        for (MessageSections.Section s : sections.sections()) {
            if (s.code() == SectionCode.DATA) {
                byte[] value = ByteBufUtil.getBytes(sections.buffer(), s.valueOffset() + 2,
                    s.endOffset() - s.valueOffset() - 2);
                return new String(value, StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError("no data section");
    }

    private static List<String> bodies(RecordingSink sink) {
        return sink.deliveries.stream().map(d -> body(d.message())).toList();
    }

    @Test
    void dropHeadKeepsTheNewestAndDeadLettersTheOldestAsMaxlen() {
        Queue dlq = declare("dlq", Map.of());
        Queue q = declare("q", Map.of("x-max-length", 3L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        for (int i = 0; i < 5; i++) {
            q.publish(text("m" + i, "q"), null);
        }
        assertThat(bodies(consume(q, 10))).containsExactly("m2", "m3", "m4");
        RecordingSink dead = consume(dlq, 10);
        assertThat(bodies(dead)).containsExactly("m0", "m1");
        List<Death> deaths = dead.deliveries.get(0).message().deaths();
        assertThat(deaths).containsExactly(new Death("q", "maxlen", 1, Instant.ofEpochMilli(START),
            Instant.ofEpochMilli(START), "", List.of("q"), -1));
    }

    @Test
    void deadLettersEnterASelectorQueueOnlyWhenTheyMatch() {
        Queue reds = declare("reds", Map.of(io.skiffmq.core.filter.SubscriptionFilter.SELECTOR_ARGUMENT,
            "color = 'red'"));
        Queue q = declare("q", Map.of("x-max-length", 1L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "reds"));
        for (String color : new String[] {"red", "blue", "red"}) {
            q.publish(io.skiffmq.core.TestMessages.amqp10(
                new org.apache.qpid.proton.amqp.messaging.ApplicationProperties(Map.of("color", color))), null);
        }
        assertThat(reds.readyCount()).as("the first red one died into it; the blue one was filtered out")
            .isEqualTo(1);
    }

    @Test
    void messagesASelectorConsumerSkipsStillExpireAndDeadLetter() {
        Queue dlq = declare("dlq", Map.of());
        Queue q = declare("q", Map.of("x-message-ttl", 1000L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        RecordingSink reds = new RecordingSink();
        sinks.add(reds);
        reds.consumer = q.subscribe(reds, ConsumerFlow.credit(), false, false, 0,
            io.skiffmq.core.filter.Selector.parse("color = 'red'"));
        q.flow(reds.consumer, 0, 10, false, false);
        // red first: with every message paged (PagedQueueArgumentsBehaviourTest) a selector consumer sees a lane's
        // tail only as its head drains (docs/selectors.md)
        for (String color : new String[] {"red", "blue", "blue"}) {
            q.publish(io.skiffmq.core.TestMessages.amqp10(
                new org.apache.qpid.proton.amqp.messaging.ApplicationProperties(Map.of("color", color))), null);
        }
        assertThat(reds.deliveries).hasSize(1);
        assertThat(q.readyCount()).isEqualTo(2);
        clock.advance(1000);
        assertThat(q.readyCount()).as("skipped ones expire at the head, by the timer").isZero();
        assertThat(dlq.readyCount()).isEqualTo(2);
    }

    @Test
    void maxLengthBytesCountsBodies() {
        Queue q = declare("q", Map.of("x-max-length-bytes", 25L));
        for (int i = 0; i < 5; i++) {
            q.publish(amqp091("0123456789", "q", null, null), null);
        }
        assertThat(q.readyCount()).as("two 10-byte bodies fit in 25 bytes").isEqualTo(2);
    }

    @Test
    void aRequeuePastTheLengthLimitDropsTheHeadAsMaxlen() {
        Queue dlq = declare("dlq", Map.of());
        Queue q = declare("q", Map.of("x-max-length", 2L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        q.publish(text("m0", "q"), null);
        q.publish(text("m1", "q"), null);
        RecordingSink sink = consume(q, 2);
        q.publish(text("m2", "q"), null);
        q.publish(text("m3", "q"), null);
        assertThat(q.readyCount()).isEqualTo(2);
        // m0 and m1 go back ahead of m2 and m3: four past a limit of two, so the two at the head die
        q.settle(sink.consumer, 0, 1, Outcome.RELEASED);
        assertThat(q.readyCount()).isEqualTo(2);
        assertThat(bodies(consume(q, 10))).containsExactly("m2", "m3");
        RecordingSink dead = consume(dlq, 10);
        assertThat(bodies(dead)).containsExactly("m0", "m1");
        assertThat(dead.deliveries.get(0).message().deaths()).extracting(Death::reason).containsExactly("maxlen");
    }

    @Test
    void aRequeuePastTheByteLimitDropsTheHead() {
        Queue q = declare("q", Map.of("x-max-length-bytes", 25L));
        q.publish(amqp091("old-012345", "q", null, null), null);
        RecordingSink sink = consume(q, 1);
        q.publish(amqp091("new-012345", "q", null, null), null);
        q.publish(amqp091("new-abcdef", "q", null, null), null);
        q.settle(sink.consumer, 0, 0, Outcome.MODIFIED_FAILED);
        assertThat(q.readyCount()).as("three 10-byte bodies do not fit in 25 bytes").isEqualTo(2);
        assertThat(bodies(consume(q, 10))).containsExactly("new-012345", "new-abcdef");
    }

    @Test
    void aRejectPublishQueueTakesARequeueBackPastItsLimit() {
        for (String overflow : List.of("reject-publish", "reject-publish-dlx")) {
            Queue q = declare("q-" + overflow, Map.of("x-max-length", 1L, "x-overflow", overflow));
            q.publish(text("m0", q.name()), null);
            RecordingSink sink = consume(q, 1);
            q.publish(text("m1", q.name()), null);
            q.settle(sink.consumer, 0, 0, Outcome.RELEASED);
            assertThat(q.readyCount()).as(overflow + ": as RabbitMQ's maybe_drop_head, nothing dropped").isEqualTo(2);
        }
    }

    @Test
    void rejectPublishRefusesWhileFullAndConfirmsTheRest() {
        Queue q = declare("q", Map.of("x-max-length", 2L, "x-overflow", "reject-publish"));
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            q.publish(text("m" + i, "q"), recording(outcomes, n));
        }
        assertThat(outcomes).containsExactly("0 confirmed", "1 confirmed", "2 refused", "3 refused");
        assertThat(q.readyCount()).isEqualTo(2);
    }

    @Test
    void messagesExpireByTimerOnAnIdleQueueAtTheShorterOfTheTwoTtls() {
        Queue dlq = declare("dlq", Map.of());
        Queue q = declare("q", Map.of("x-message-ttl", 1000L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        q.publish(amqp091("own", "q", "400", null), null);
        q.publish(amqp091("queue's", "q", null, null), null);
        clock.advance(399);
        assertThat(q.readyCount()).isEqualTo(2);
        clock.advance(1);
        assertThat(q.readyCount()).as("its own TTL is shorter").isEqualTo(1);
        clock.advance(600);
        assertThat(q.readyCount()).isZero();
        RecordingSink dead = consume(dlq, 10);
        assertThat(bodies(dead)).containsExactly("own", "queue's");
        Message own = dead.deliveries.get(0).message();
        assertThat(own.ttl()).as("the TTL is gone from a dead-lettered message").isEqualTo(-1);
        assertThat(own.deaths()).singleElement().satisfies(d -> {
            assertThat(d.reason()).isEqualTo("expired");
            assertThat(d.ttl()).as("kept in the history, as original-expiration").isEqualTo(400);
        });
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> xDeath = (List<Map<String, Object>>) ((Amqp091Message) own).properties().headers()
            .get("x-death");
        assertThat(xDeath.get(0)).containsEntry("count", 1L).containsEntry("reason", "expired")
            .containsEntry("queue", "q").containsEntry("exchange", "").containsEntry("routing-keys", List.of("q"))
            .containsEntry("original-expiration", "400").containsEntry("time", Instant.ofEpochSecond(START / 1000 + 0));
        assertThat(((Amqp091Message) own).properties().headers()).containsEntry("x-first-death-reason", "expired")
            .containsEntry("x-first-death-queue", "q").containsEntry("x-last-death-queue", "q");
        assertThat(clock.pendingTimers()).isZero();
    }

    @Test
    void onlyTheHeadExpiresAsInRabbitMq() {
        Queue q = declare("q", Map.of());
        q.publish(amqp091("long", "q", "10000", null), null);
        q.publish(amqp091("short", "q", "100", null), null);
        clock.advance(1000);
        assertThat(q.readyCount()).as("'short' waits behind 'long'").isEqualTo(2);
        assertThat(bodies(consume(q, 10))).as("expired messages are never delivered").containsExactly("long");
    }

    @Test
    void aTtlOfZeroDeliversOnlyToAConsumerWaitingThen() {
        Queue q = declare("q", Map.of("x-message-ttl", 0L));
        q.publish(text("nobody", "q"), null);
        assertThat(q.readyCount()).isZero();
        RecordingSink sink = consume(q, 10);
        q.publish(text("taken", "q"), null);
        assertThat(bodies(sink)).containsExactly("taken");
    }

    /**
     * A message with a TTL of 0 is stamped with the time it arrives; a consumer waiting with room gets it even when
     * the clock has moved on by the time the queue hands it out (1.6 % of such messages were dropped so).
     */
    @Test
    void aTtlOfZeroReachesAWaitingConsumerEvenWhenTheClockMovesOnBeforeTheDispatch() {
        BrokerClock ticking = new BrokerClock() {
            private long now = START;

            @Override
            public long millis() {
                return now++; // a millisecond later at every reading
            }

            @Override
            public Timer schedule(long atMillis, QueueExecutor executor, Runnable task) {
                return clock.schedule(atMillis, executor, task);
            }
        };
        VirtualHost host = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store(), ticking, true);
        Queue q = host.declareQueue("q", false, Map.of("x-message-ttl", 0L));
        RecordingSink sink = consume(q, 10);
        for (int i = 0; i < 3; i++) {
            q.publish(text("m" + i, "q"), null);
        }
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m2");
    }

    /**
     * RabbitMQ drops (or dead-letters) a requeued message whose TTL has run out, {@code Now >= Expiry}, before it
     * delivers again ({@code rabbit_amqqueue_process:requeue_and_run/4}, {@code drop_expired_msgs/2}): a TTL of 0
     * means one delivery at most, even when the requeue comes in the millisecond it was published.
     */
    @Test
    void aRequeuedMessageWhoseTtlRanOutDiesInsteadOfGoingOutAgain() {
        Queue dlq = declare("dlq", Map.of());
        Queue zero = declare("zero", Map.of("x-message-ttl", 0L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        RecordingSink sink = consume(zero, 10);
        zero.publish(text("once", "zero"), null);
        assertThat(bodies(sink)).containsExactly("once");
        zero.settle(sink.consumer, sink.deliveries.get(0).tag(), sink.deliveries.get(0).tag(), Outcome.RELEASED);
        assertThat(bodies(sink)).as("the clock has not moved: requeued at its expiry").containsExactly("once");
        assertThat(zero.readyCount()).isZero();

        Queue q = declare("q", Map.of("x-message-ttl", 1000L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        RecordingSink first = consume(q, 10);
        q.publish(text("timed", "q"), null);
        assertThat(bodies(first)).containsExactly("timed");
        RecordingSink second = consume(q, 10);
        clock.advance(1000);
        q.unsubscribe(first.consumer, Outcome.RELEASED); // a channel closing gives it back as its TTL runs out
        assertThat(second.deliveries).as("not handed to the other consumer").isEmpty();
        assertThat(q.readyCount()).isZero();
        assertThat(bodies(consume(dlq, 10))).containsExactly("once", "timed");
    }

    @Test
    void anUnusedQueueExpiresButNotWhileConsumed() {
        Queue q = declare("q", Map.of("x-expires", 5000L));
        RecordingSink sink = consume(q, 1);
        clock.advance(10_000);
        assertThat(vhost.queue("q")).isSameAs(q);
        q.unsubscribe(sink.consumer, Outcome.RELEASED);
        clock.advance(4000);
        declare("q", Map.of("x-expires", 5000L)); // a redeclaration is a use
        clock.advance(4999);
        assertThat(vhost.queue("q")).isSameAs(q);
        clock.advance(1);
        assertThat(vhost.queue("q")).isNull();
    }

    @Test
    void rejectedMessagesAreDeadLetteredWithTheirRoutingKeyAndCountedPerQueueAndReason() throws Exception {
        declare("dlq", Map.of());
        vhost.declareQueue("retry", false, Map.of("x-dead-letter-exchange", ""));
        Queue q = declare("q", Map.of("x-dead-letter-exchange", "amq.direct"));
        vhost.bind(new io.skiffmq.core.routing.Binding("amq.direct",
            io.skiffmq.core.routing.Destination.queue("retry"), "q", Map.of()));
        q.publish(text("m", "q"), null);
        RecordingSink first = consume(q, 1);
        q.settle(first.consumer, 0, 0, Outcome.REJECTED);
        // retry's dead letters go back to q through the default exchange with the key they have: "q"
        Queue retry = vhost.queue("retry");
        RecordingSink retried = consume(retry, 1);
        assertThat(bodies(retried)).containsExactly("m");
        retry.settle(retried.consumer, 0, 0, Outcome.REJECTED);
        RecordingSink second = consume(q, 1);
        assertThat(second.deliveries).hasSize(1);
        q.settle(second.consumer, 0, 0, Outcome.REJECTED);
        RecordingSink third = consume(retry, 2);
        Message dead = third.deliveries.get(0).message();
        assertThat(dead.deaths()).extracting(Death::queue, Death::reason, Death::count)
            .as("most recent first; q's rejection counted twice").containsExactly(
                org.assertj.core.groups.Tuple.tuple("q", "rejected", 2L),
                org.assertj.core.groups.Tuple.tuple("retry", "rejected", 1L));
        assertThat(((Amqp10Message) dead).sections().messageAnnotation("x-first-death-queue")).isEqualTo("q");
    }

    @Test
    void anAutomaticCycleIsDroppedButOneWithARejectionIsNot() {
        declare("a", Map.of("x-message-ttl", 10L, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "b"));
        declare("b", Map.of("x-message-ttl", 10L, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "a"));
        vhost.queue("a").publish(text("m", "a"), null);
        clock.advance(10);
        assertThat(vhost.queue("b").readyCount()).isEqualTo(1);
        clock.advance(10);
        assertThat(vhost.queue("a").readyCount() + vhost.queue("b").readyCount())
            .as("b -> a closes a cycle of expiries: dropped").isZero();
    }

    @Test
    void theDeliveryLimitDeadLettersAPoisonMessage() {
        declare("dlq", Map.of());
        Queue q = declare("q", Map.of("x-delivery-limit", 1L, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", "dlq"));
        q.publish(text("poison", "q"), null);
        RecordingSink sink = consume(q, 10);
        q.settle(sink.consumer, 0, 0, Outcome.MODIFIED_FAILED);
        q.settle(sink.consumer, 1, 1, Outcome.RELEASED);
        assertThat(sink.deliveries).as("released does not count").hasSize(3);
        q.settle(sink.consumer, 2, 2, Outcome.MODIFIED_FAILED);
        assertThat(sink.deliveries).hasSize(3);
        RecordingSink dead = consume(vhost.queue("dlq"), 1);
        assertThat(dead.deliveries.get(0).message().deaths()).extracting(Death::reason)
            .containsExactly("delivery_limit");
    }

    @Test
    void priorityLanesGoHighestFirstWithPrioritiesCappedAtTheMaximum() {
        Queue q = declare("q", Map.of("x-max-priority", 5L));
        q.publish(amqp091("p1", "q", null, 1), null);
        q.publish(amqp091("p9", "q", null, 9), null);
        q.publish(amqp091("p3", "q", null, 3), null);
        q.publish(amqp091("p5", "q", null, 5), null);
        q.publish(amqp091("none", "q", null, null), null);
        assertThat(bodies(consume(q, 10))).as("9 counts as 5, and keeps its place among the 5s")
            .containsExactly("p9", "p5", "p3", "p1", "none");
    }

    private Queue quorum(String name) {
        return vhost.declareQueue(name, true, Map.of("x-queue-type", "quorum"));
    }

    @Test
    void aQuorumQueueServesPrioritiesAbove4TwoToOneAsRabbitFifoQDoes() {
        Queue q = quorum("qq");
        q.publish(amqp091("n1", "qq", null, null), null);
        q.publish(amqp091("n2", "qq", null, 4), null);
        q.publish(amqp091("h1", "qq", null, 5), null);
        q.publish(amqp091("h2", "qq", null, 9), null);
        q.publish(amqp091("h3", "qq", null, 200), null);
        q.publish(amqp091("h4", "qq", null, 5), null);
        q.publish(amqp091("n3", "qq", null, 0), null);
        assertThat(bodies(consume(q, 10)))
            .as("two high, then every third the older head (n1 before h3), high while it has any, then normal")
            .containsExactly("h1", "h2", "n1", "h3", "h4", "n2", "n3");
    }

    @Test
    void aQuorumQueueTakesAnOlderHighHeadOnEveryThirdTake() {
        Queue q = quorum("qq");
        q.publish(amqp091("h1", "qq", null, 5), null);
        q.publish(amqp091("n1", "qq", null, null), null);
        for (int i = 2; i <= 5; i++) {
            q.publish(amqp091("h" + i, "qq", null, 7), null);
        }
        assertThat(bodies(consume(q, 10))).as("n1 is older than h3 at the third take, not than h5 at the sixth")
            .containsExactly("h1", "h2", "n1", "h3", "h4", "h5");
    }

    @Test
    void aQuorumQueueCountsTakesFromOneLaneToo() {
        Queue q = quorum("qq");
        q.publish(amqp091("n1", "qq", null, null), null);
        q.publish(amqp091("n2", "qq", null, null), null);
        RecordingSink sink = consume(q, 1);
        assertThat(bodies(sink)).containsExactly("n1");
        for (int i = 1; i <= 3; i++) {
            q.publish(amqp091("h" + i, "qq", null, 6), null);
        }
        q.flow(sink.consumer, 1, 10, false, false);
        assertThat(bodies(sink)).as("n1 was the first take: the third is h2's or n2's, and n2 is older")
            .containsExactly("n1", "h1", "n2", "h2", "h3");
    }

    @Test
    void aQuorumQueueDeliversGivenBackMessagesFirstInTheOrderTheyCameBack() {
        Queue q = quorum("qq");
        q.publish(amqp091("n1", "qq", null, null), null);
        q.publish(amqp091("n2", "qq", null, null), null);
        q.publish(amqp091("n3", "qq", null, null), null);
        RecordingSink sink = consume(q, 3);
        assertThat(bodies(sink)).containsExactly("n1", "n2", "n3");
        q.publish(amqp091("h1", "qq", null, 5), null);
        q.publish(amqp091("h2", "qq", null, 5), null);
        q.settle(sink.consumer, 2, 2, Outcome.RELEASED);
        q.settle(sink.consumer, 0, 0, Outcome.RELEASED);
        q.settle(sink.consumer, 1, 1, Outcome.MODIFIED_FAILED);
        q.flow(sink.consumer, 3, 10, false, false);
        assertThat(bodies(sink)).as("returns ahead of the high lane, as they came back")
            .containsExactly("n1", "n2", "n3", "n3", "n1", "n2", "h1", "h2");
    }

    @Test
    void aQuorumQueueRestoredFromItsReplicaServesReturnedOnesFirstThenItsLanes() {
        Queue q = quorum("qq");
        List<StoredMessage> stored = new ArrayList<>();
        String[] bodies = {"n1", "h1", "n2", "h2", "h3", "n3"};
        int[] priorities = {0, 5, 4, 8, 5, 0};
        for (int i = 0; i < bodies.length; i++) {
            Message m = amqp091(bodies[i], "qq", null, priorities[i]);
            long returns = i == 2 || i == 4 ? 1 : 0; // n2 and h3 were given back before
            stored.add(new StoredMessage(i, m, 0, -1, m.priority(), -1, m.bodySize(), -1, true, returns, null));
        }
        ((ClassicQueue) q).restore(stored);
        ((ClassicQueue) q).recovered();
        assertThat(bodies(consume(q, 10))).as("n2 and h3 first, in sequence order; then h1 h2, n1 (older), n3")
            .containsExactly("n2", "h3", "h1", "h2", "n1", "n3");
    }

    @Test
    void aSingleActiveConsumerHandsOverToTheNextInLine() {
        Queue q = declare("q", Map.of("x-single-active-consumer", true));
        for (int i = 0; i < 4; i++) {
            q.publish(text("m" + i, "q"), null);
        }
        RecordingSink active = consume(q, 2);
        RecordingSink next = consume(q, 10);
        RecordingSink last = consume(q, 10);
        assertThat(bodies(active)).containsExactly("m0", "m1");
        assertThat(next.deliveries).isEmpty();
        assertThat(q.consumerCount()).as("waiting consumers count, as in RabbitMQ").isEqualTo(3);
        q.unsubscribe(active.consumer, Outcome.RELEASED);
        assertThat(bodies(next)).as("its unsettled messages come back first").containsExactly("m0", "m1", "m2", "m3");
        assertThat(last.deliveries).isEmpty();
    }

    @Test
    void confirmAfterConsumeWaitsForTheConsumersAcceptAndRefusesWhatIsNotConsumed() {
        Queue q = declare("q", Map.of(QueueArguments.CONFIRM_AFTER_CONSUME, true));
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int n = i;
            q.publish(text("m" + i, "q"), recording(outcomes, n));
        }
        assertThat(outcomes).isEmpty();
        RecordingSink sink = consume(q, 2);
        q.settle(sink.consumer, 1, 1, Outcome.ACCEPTED);
        q.settle(sink.consumer, 0, 0, Outcome.RELEASED);
        assertThat(outcomes).containsExactly("1 confirmed");
        q.flow(sink.consumer, 2, 1, false, false);
        assertThat(bodies(sink)).containsExactly("m0", "m1", "m0");
        q.settle(sink.consumer, 2, 2, Outcome.REJECTED);
        assertThat(outcomes).containsExactly("1 confirmed", "0 refused");
        q.purge();
        assertThat(outcomes).containsExactly("1 confirmed", "0 refused", "2 refused");
    }

    @Test
    void confirmAfterConsumeRefusesAPublishThatReachesTheQueueAfterItsDeletion() {
        Queue q = declare("q", Map.of(QueueArguments.CONFIRM_AFTER_CONSUME, true));
        q.delete();
        List<String> outcomes = new ArrayList<>();
        // routed before the deletion, arriving after it: never consumed, so never confirmed
        q.publish(text("late", "q"), new PublishConfirm() {
            @Override
            public void run() {
                outcomes.add("confirmed");
            }

            @Override
            public void refused() {
                outcomes.add("refused");
            }
        });
        assertThat(outcomes).containsExactly("refused");
    }

    @Test
    void confirmAfterConsumeIsComparedOnRedeclaration() {
        // a publisher that asks for confirms after consume must not get declare-ok from a queue whose confirms mean
        // "queued", nor the other way round (RabbitMQ compares x-single-active-consumer so; it has no such argument)
        declare("plain", Map.of());
        assertThatThrownBy(() -> declare("plain", Map.of(QueueArguments.CONFIRM_AFTER_CONSUME, true)))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.PRECONDITION_FAILED));
        declare("cac", Map.of(QueueArguments.CONFIRM_AFTER_CONSUME, true));
        assertThatThrownBy(() -> declare("cac", Map.of())).isInstanceOf(BrokerException.class);
        assertThat(declare("cac", Map.of(QueueArguments.CONFIRM_AFTER_CONSUME, true))).isSameAs(vhost.queue("cac"));
    }

    @Test
    void argumentsAreCheckedAsRabbitMqChecksThem() {
        assertThatThrownBy(() -> declare("q", Map.of("x-max-length", -1L)))
            .hasMessage("invalid arg 'x-max-length' for queue 'q' in vhost '/': {value_negative,-1}");
        assertThatThrownBy(() -> declare("q", Map.of("x-expires", 0)))
            .hasMessage("invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}");
        assertThatThrownBy(() -> declare("q", Map.of("x-message-ttl", "1000")))
            .hasMessage("invalid arg 'x-message-ttl' for queue 'q' in vhost '/': \"expected integer, got longstr\"");
        assertThatThrownBy(() -> declare("q", Map.of("x-overflow", "drop-tail")))
            .hasMessage("invalid arg 'x-overflow' for queue 'q' in vhost '/': invalid_overflow");
        assertThatThrownBy(() -> declare("q", Map.of("x-dead-letter-routing-key", "k")))
            .hasMessage("invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': "
                + "routing_key_but_no_dlx_defined");
        assertThatThrownBy(() -> declare("q", Map.of("x-max-priority", 256)))
            .hasMessage("invalid arg 'x-max-priority' for queue 'q' in vhost '/': {max_value_exceeded,256}");
        assertThatThrownBy(() -> declare("q", Map.of("x-max-age", "1D")))
            .hasMessage("invalid arg 'x-max-age' for queue 'q' in vhost '/' of queue type rabbit_classic_queue");
        assertThatThrownBy(() -> declare("q", Map.of("x-queue-type", "quorum")))
            .hasMessage("invalid property 'non-durable' for queue 'q' in vhost '/'")
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.INVALID));
        assertThat(vhost.queue("q")).isNull();
    }
}
