package io.skiffmq.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Exclusive, auto-delete queues and deletion watchers in the virtual host. */
class ExclusiveQueueTest {
    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
    private final Object connection = new Object();
    private final Object otherConnection = new Object();

    private static final ConsumerSink IGNORING = new ConsumerSink() {
        @Override
        public void deliver(QueueDelivery delivery) {
            delivery.message().release();
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        }

        @Override
        public void queueDeleted() {
        }
    };

    @Test
    void anExclusiveQueueIsItsConnectionsAndGoesWithIt() {
        QueueDeclaration declaration = new QueueDeclaration("mine", true, true, false, Map.of());
        Queue queue = vhost.declareQueue(declaration, connection);
        assertThat(vhost.declareQueue(declaration, connection)).as("its owner redeclares it").isSameAs(queue);
        assertThatThrownBy(() -> vhost.declareQueue(declaration, otherConnection))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.RESOURCE_LOCKED));
        assertThatThrownBy(() -> vhost.checkAccess(queue, otherConnection)).isInstanceOf(BrokerException.class);
        vhost.checkAccess(queue, connection);

        vhost.bind(new Binding("amq.fanout", Destination.queue("mine"), "", Map.of()));
        vhost.ownerClosed(otherConnection);
        assertThat(vhost.queue("mine")).isSameAs(queue);
        vhost.ownerClosed(connection);
        assertThat(vhost.queue("mine")).isNull();
        assertThat(vhost.bindings().bindingsFrom("amq.fanout")).isEmpty();
    }

    @Test
    void redeclaringWithOtherPropertiesFails() {
        vhost.declareQueue(new QueueDeclaration("q", false, false, true, Map.of()), null);
        assertThatThrownBy(() -> vhost.declareQueue(new QueueDeclaration("q", false, false, false, Map.of()), null))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.PRECONDITION_FAILED));
    }

    @Test
    void anAutoDeleteQueueGoesWithItsLastConsumerAndItsWatchersHear() {
        Queue queue = vhost.declareQueue(new QueueDeclaration("auto", false, false, true, Map.of()), null);
        List<String> heard = new ArrayList<>();
        vhost.whenDeleted(Destination.queue("auto"), () -> heard.add("deleted"));
        Runnable cancelled = vhost.whenDeleted(Destination.queue("auto"), () -> heard.add("cancelled watcher"));
        cancelled.run();
        QueueConsumer consumer = queue.subscribe(IGNORING, ConsumerFlow.credit(), false);
        assertThat(vhost.queue("auto")).isSameAs(queue);
        queue.unsubscribe(consumer, Outcome.RELEASED);
        assertThat(vhost.queue("auto")).isNull();
        assertThat(heard).containsExactly("deleted");
    }

    @Test
    void anotherConnectionMayNotUnbindAnExclusiveQueueButMayUnbindWhatIsNotThere() {
        vhost.declareQueue(new QueueDeclaration("mine", false, true, false, Map.of()), connection);
        Binding bound = new Binding("amq.direct", Destination.queue("mine"), "k", Map.of());
        vhost.bind(bound);
        assertThat(vhost.unbind(new Binding("amq.direct", Destination.queue("mine"), "other", Map.of()),
            otherConnection)).as("nothing there, nothing checked").isFalse();
        assertThat(vhost.unbind(new Binding("amq.direct", Destination.queue("missing"), "k", Map.of()),
            otherConnection)).isFalse();
        assertThat(vhost.unbind(new Binding("missing", Destination.queue("mine"), "k", Map.of()), otherConnection))
            .isFalse();
        assertThatThrownBy(() -> vhost.unbind(bound, otherConnection))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.RESOURCE_LOCKED));
        assertThat(vhost.bindings().contains(bound)).isTrue();
        assertThat(vhost.unbind(bound, connection)).isTrue();
    }

    @Test
    void deletingAnExchangeRunsItsWatchersAndThoseOfExchangesAutoDeletedWithIt() {
        vhost.declareExchange(new Exchange("src", Exchange.Type.FANOUT, false, false, false, Map.of()));
        vhost.declareExchange(new Exchange("auto", Exchange.Type.FANOUT, false, true, false, Map.of()));
        vhost.bind(new Binding("auto", Destination.exchange("src"), "", Map.of()));
        List<String> heard = new ArrayList<>();
        vhost.whenDeleted(Destination.exchange("src"), () -> heard.add("src"));
        vhost.whenDeleted(Destination.exchange("auto"), () -> heard.add("auto"));
        vhost.deleteExchange("src");
        assertThat(heard).containsExactly("src", "auto");
        assertThat(vhost.exchange("auto")).isNull();
    }
}
