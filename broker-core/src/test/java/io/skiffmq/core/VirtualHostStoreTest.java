package io.skiffmq.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
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

        @Override
        public CompletableFuture<Void> definitionsChanged(VirtualHost vhost) {
            for (Queue queue : vhost.persistentQueues()) {
                seen.add(queue.name() + (vhost.queue(queue.name()) == null ? " not yet routable" : " routable"));
            }
            CompletableFuture<Void> save = new CompletableFuture<>();
            saves.add(save);
            return save;
        }
    }

    @Test
    void aDurableQueueIsRoutableOnlyOnceSavedAndNotDeclaredWhenTheSaveFails() {
        RecordingStore store = new RecordingStore();
        VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store);
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
        assertThat(vhost.persistentQueues()).extracting(Queue::name).containsExactly("saved");
        vhost.declareQueue("transient", false, Map.of());
        assertThat(vhost.queue("transient")).as("transient queues need no save").isNotNull();
        assertThat(store.saves).hasSize(2);
    }
}
