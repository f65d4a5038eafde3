package io.skiffmq.core.publish;

import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.filter.SubscriptionFilter;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Queues with {@code x-selector} and {@code x-no-local} (topic subscriptions): the publisher leaves them out of a
 * message's queues when their filter refuses it, and confirms a message every queue refused.
 */
@ExtendWith(LeakDetection.class)
class SubscriptionFilterPublishTest {
    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
    private final List<Long> confirmed = new ArrayList<>();
    private final Object myConnection = new Object();
    private final Publisher publisher = new Publisher(vhost, QueueExecutor.CALLER_THREAD, new Publisher.Confirms() {
        @Override
        public void confirmed(long firstTag, long lastTag) {
            for (long t = firstTag; t <= lastTag; t++) {
                confirmed.add(t);
            }
        }

        @Override
        public void rejected(long firstTag, long lastTag) {
            throw new AssertionError("nothing is refused here");
        }

        @Override
        public void batchEnd() {
        }
    }).from(myConnection);

    /** A message to amq.direct with key rk (as {@code TestMessages.amqp10} publishes them). */
    private static Message routed(String color) {
        return amqp10(new ApplicationProperties(Map.of("color", color)));
    }

    @Test
    void aSelectorQueueTakesOnlyWhatMatchesAndARefusedMessageIsStillConfirmed() {
        Queue red = vhost.declareQueue("red", false, Map.of(SubscriptionFilter.SELECTOR_ARGUMENT, "color = 'red'"));
        Queue all = vhost.declareQueue("all", false, Map.of());
        vhost.bind(new Binding("amq.direct", Destination.queue("red"), "rk", Map.of()));
        vhost.bind(new Binding("amq.direct", Destination.queue("all"), "rk", Map.of()));
        assertThat(publisher.publish(routed("red"), 0)).isEqualTo(Publisher.Routed.ROUTED);
        assertThat(publisher.publish(routed("blue"), 1)).isEqualTo(Publisher.Routed.ROUTED);
        assertThat(red.readyCount()).isEqualTo(1);
        assertThat(all.readyCount()).isEqualTo(2);
        vhost.unbind(new Binding("amq.direct", Destination.queue("all"), "rk", Map.of()));
        assertThat(publisher.publish(routed("green"), 2)).as("routed, filtered out of every queue")
            .isEqualTo(Publisher.Routed.ROUTED);
        assertThat(confirmed).containsExactlyInAnyOrder(0L, 1L, 2L);
        assertThat(red.readyCount()).isEqualTo(1);
        red.purge();
        all.purge();
    }

    @Test
    void noLocalLeavesOutTheSubscribersConnectionWhileItIsAttached() {
        Queue sub = vhost.declareQueue("sub", false, Map.of(SubscriptionFilter.NO_LOCAL_ARGUMENT, true));
        vhost.bind(new Binding("amq.direct", Destination.queue("sub"), "rk", Map.of()));
        publisher.publish(routed("red"), -1);
        assertThat(sub.readyCount()).as("no subscriber attached: nothing is local").isEqualTo(1);
        sub.subscriptionFilter().subscriber(myConnection);
        publisher.publish(routed("red"), -1);
        assertThat(sub.readyCount()).isEqualTo(1);
        sub.subscriptionFilter().unsubscribed(new Object());
        publisher.publish(routed("red"), -1);
        assertThat(sub.readyCount()).as("another connection leaving changes nothing").isEqualTo(1);
        sub.subscriptionFilter().unsubscribed(myConnection);
        publisher.publish(routed("red"), -1);
        assertThat(sub.readyCount()).isEqualTo(2);
        sub.purge();
    }

    @Test
    void badFilterArgumentsAreRefusedAsRabbitMqRefusesArguments() {
        assertThatThrownBy(() -> vhost.declareQueue("bad", false, Map.of(SubscriptionFilter.SELECTOR_ARGUMENT,
            "color = ")))
            .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind())
                .isEqualTo(BrokerException.Kind.PRECONDITION_FAILED))
            .hasMessageContaining("invalid arg 'x-selector'").hasMessageContaining("position 9");
        assertThatThrownBy(() -> vhost.declareQueue("bad", false, Map.of(SubscriptionFilter.NO_LOCAL_ARGUMENT,
            "yes")))
            .isInstanceOf(BrokerException.class).hasMessageContaining("invalid arg 'x-no-local'");
    }
}
