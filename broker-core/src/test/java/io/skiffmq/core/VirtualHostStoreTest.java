package io.skiffmq.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a virtual host promises its store: a durable queue is saved before anyone can route to it. */
class VirtualHostStoreTest {
    /** Records what the virtual host showed it; fails saves on demand. */
    private static final class RecordingStore implements VirtualHostStore {
        final List<String> seen = new ArrayList<>();
        boolean fail;

        @Override
        public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor) {
            return TRANSIENT.createQueue(declaration, executor);
        }

        @Override
        public void definitionsChanged(VirtualHost vhost, Queue declaring) {
            if (declaring != null) {
                seen.add(declaring.name() + (vhost.queue(declaring.name()) == null ? " not yet routable" : " routable"));
            }
            if (fail) {
                throw new IllegalStateException("disk full");
            }
        }
    }

    @Test
    void aDurableQueueIsSavedBeforeItIsRoutableAndNotDeclaredWhenTheSaveFails() {
        RecordingStore store = new RecordingStore();
        VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, store);
        vhost.declareQueue("saved", true, Map.of());
        assertThat(store.seen).containsExactly("saved not yet routable");
        assertThat(vhost.queue("saved")).isNotNull();

        store.fail = true;
        assertThatThrownBy(() -> vhost.declareQueue("unsaved", true, Map.of())).hasMessage("disk full");
        assertThat(vhost.queue("unsaved")).as("a queue whose definition is not durable does not exist").isNull();
        vhost.declareQueue("transient", false, Map.of());
        assertThat(vhost.queue("transient")).as("transient queues need no save").isNotNull();
    }
}
