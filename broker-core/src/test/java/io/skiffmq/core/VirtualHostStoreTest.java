package io.skiffmq.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeleted;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** What a virtual host promises its store: a durable queue is saved before anyone can route to it. */
class VirtualHostStoreTest {
    /** Records what the virtual host showed it; the test completes each save. */
    private static final class RecordingStore implements VirtualHostStore {
        final List<String> seen = new ArrayList<>();
        final List<CompletableFuture<Void>> saves = new ArrayList<>();

        @Override
        public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
            return TRANSIENT.createQueue(declaration, executor, context);
        }

        VirtualHost vhost;

        @Override
        public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
            seen.add(declaration.name() + (vhost.queue(declaration.name()) == null ? " not yet routable" : " routable"));
            CompletableFuture<Void> save = new CompletableFuture<>();
            saves.add(save);
            return save;
        }

        @Override
        public CompletableFuture<Void> changed(List<VhostChange> changes) {
            throw new AssertionError("no other change here: " + changes);
        }
    }

    @Test
    void aDurableQueueIsRoutableOnlyOnceSavedAndNotDeclaredWhenTheSaveFails() {
        RecordingStore store = new RecordingStore();
        VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store);
        store.vhost = vhost;
        CompletableFuture<Queue> declared = vhost.declareQueueAsync(QueueDeclaration.of("saved", true, Map.of()), null);
        assertThat(store.seen).containsExactly("saved not yet routable");
        assertThat(declared).isNotDone();
        assertThat(vhost.queue("saved")).isNull();
        assertThat(vhost.declareQueueAsync(QueueDeclaration.of("saved", true, Map.of()), null))
            .as("a second declaration waits for the same save").isSameAs(declared);
        assertThat(vhost.declareQueueAsync(QueueDeclaration.of("saved", false, Map.of()), null))
            .as("and one that differs fails at once").isCompletedExceptionally();

        store.saves.get(0).complete(null);
        assertThat(declared.join()).isSameAs(vhost.queue("saved"));

        CompletableFuture<Queue> unsaved = vhost.declareQueueAsync(QueueDeclaration.of("unsaved", true, Map.of()), null);
        store.saves.get(1).completeExceptionally(new IllegalStateException("disk full"));
        assertThatThrownBy(unsaved::join).hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("disk full");
        assertThat(vhost.queue("unsaved")).as("a queue whose definition is not durable does not exist").isNull();
        assertThat(store.seen).containsExactly("saved not yet routable", "unsaved not yet routable");
        vhost.declareQueue("transient", false, Map.of());
        assertThat(vhost.queue("transient")).as("transient queues need no save").isNotNull();
        assertThat(store.saves).hasSize(2);
    }

    @Test
    void aDurableAutoDeleteExchangeCascadedAwayIsSaved() {
        List<VhostChange> saved = new ArrayList<>();
        VirtualHostStore store = new VirtualHostStore() {
            @Override
            public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
                return TRANSIENT.createQueue(declaration, executor, context);
            }

            @Override
            public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
                throw new AssertionError("no durable queue here");
            }

            @Override
            public CompletableFuture<Void> changed(List<VhostChange> changes) {
                saved.addAll(changes);
                return CompletableFuture.completedFuture(null);
            }
        };
        VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store);
        // durable auto-delete exchanges bound to one another and, at the end, to a transient queue: the bindings
        // are transient, so only the exchanges' going can tell the store anything
        vhost.declareExchange(new Exchange("down", Exchange.Type.FANOUT, true, true, false, Map.of()));
        vhost.declareExchange(new Exchange("up", Exchange.Type.FANOUT, true, true, false, Map.of()));
        vhost.declareQueue("transient", false, Map.of());
        vhost.bind(new Binding("up", Destination.exchange("down"), "", Map.of()));
        vhost.bind(new Binding("down", Destination.queue("transient"), "", Map.of()));
        saved.clear();

        vhost.deleteQueue("transient");
        assertThat(vhost.exchange("down")).isNull();
        assertThat(vhost.exchange("up")).as("it lost its only binding, to down").isNull();
        assertThat(saved).as("the store hears that the durable exchanges went, one change each")
            .containsExactly(new ExchangeDeleted("down"), new ExchangeDeleted("up"));
    }
}
