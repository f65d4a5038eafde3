package io.skiffmq.core.queue;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.VirtualHostStore;
import io.skiffmq.core.definitions.DefinitionChange;
import java.util.concurrent.CompletableFuture;

/**
 * Every queue-argument behaviour again, with queues whose memory limit is 0: each arrival goes to its lane's paged
 * tail and is read back before it can be delivered, expired, dropped or dead-lettered.
 */
class PagedQueueArgumentsBehaviourTest extends QueueArgumentsBehaviourTest {
    @Override
    VirtualHostStore store() {
        return new VirtualHostStore() {
            @Override
            public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
                return new ClassicQueue(declaration, executor, null, 0, context, new MemoryPages());
            }

            @Override
            public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> changed(java.util.List<DefinitionChange.VhostChange> changes) {
                return CompletableFuture.completedFuture(null);
            }
        };
    }
}
