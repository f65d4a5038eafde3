package io.skiffmq.core.publish;

import static io.skiffmq.core.TestMessages.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.TestMessages;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.VirtualHostStore;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.core.definitions.DefinitionChange;
import java.util.concurrent.CompletableFuture;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Publishing through the virtual host: routing results, and confirms counted across queues and batched in ranges. */
@ExtendWith(LeakDetection.class)
class PublisherTest {
    /** The publisher's thread, stepped by the test: tasks wait until {@link #runAll}. */
    private static final class SteppedExecutor implements QueueExecutor {
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

        @Override
        public boolean inExecutor() {
            return false;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        int runAll() {
            int ran = 0;
            for (Runnable task; (task = tasks.poll()) != null; ran++) {
                task.run();
            }
            return ran;
        }
    }

    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
    private final SteppedExecutor loop = new SteppedExecutor();
    private final List<long[]> ranges = new ArrayList<>();
    private int batches;
    private final List<long[]> rejectedRanges = new ArrayList<>();
    /** Tags refused as unavailable, with the queue: "tag queue". */
    private final List<String> unavailable = new ArrayList<>();
    private final Publisher publisher = new Publisher(vhost, loop, publisherConfirms());

    @Test
    void confirmsComeOncePerMessageAfterEveryQueueInRangesOneTaskPerBatch() {
        vhost.declareQueue("a", false, Map.of());
        vhost.declareQueue("b", false, Map.of());
        vhost.bind(new Binding("amq.fanout", Destination.queue("a"), "", Map.of()));
        vhost.bind(new Binding("amq.fanout", Destination.queue("b"), "", Map.of()));

        for (long tag = 10; tag < 15; tag++) {
            assertThat(publisher.publish(text("m", "amq.fanout", ""), tag)).isEqualTo(Publisher.Routed.ROUTED);
        }
        publisher.publish(text("m", "amq.fanout", ""), 20);
        publisher.publish(text("unconfirmed", "amq.fanout", ""), -1);
        assertThat(publisher.unconfirmed()).isEqualTo(6);
        assertThat(ranges).as("nothing reported before the publisher's thread runs").isEmpty();

        assertThat(loop.runAll()).as("twelve queue confirms, one task").isEqualTo(1);
        assertThat(ranges).containsExactly(new long[] {10, 14}, new long[] {20, 20});
        assertThat(batches).isEqualTo(1);
        assertThat(publisher.unconfirmed()).isZero();
        assertThat(vhost.queue("a").readyCount()).isEqualTo(7);
        vhost.deleteQueue("a");
        vhost.deleteQueue("b");
    }

    @Test
    void unroutedAlternateAndRefusedExchanges() {
        assertThat(publisher.publish(text("lost", "amq.direct", "nobody"), 1)).isEqualTo(Publisher.Routed.UNROUTED);
        vhost.declareQueue("ae-queue", false, Map.of());
        vhost.declareExchange(new Exchange("with-ae", Exchange.Type.DIRECT, false, false, false,
            Map.of("alternate-exchange", "amq.fanout")));
        vhost.bind(new Binding("amq.fanout", Destination.queue("ae-queue"), "", Map.of()));
        assertThat(publisher.publish(text("saved", "with-ae", "nobody"), 2)).isEqualTo(Publisher.Routed.ROUTED);

        assertThatThrownBy(() -> publisher.publish(text("m", "missing", "k"), 3))
            .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.NOT_FOUND));
        vhost.declareExchange(new Exchange("inside", Exchange.Type.FANOUT, false, false, true, Map.of()));
        assertThatThrownBy(() -> publisher.publish(text("m", "inside", "k"), 4))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.ACCESS_REFUSED));
        loop.runAll();
        assertThat(ranges).containsExactly(new long[] {2, 2});
        vhost.deleteQueue("ae-queue");
    }

    @Test
    void aMessageAnyQueueRefusesIsRejectedNotConfirmed() {
        // "broken" is durable, and its log fails every write: it refuses durable messages
        VirtualHost withBrokenLog = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD, new VirtualHostStore() {
            @Override
            public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
                return new ClassicQueue(declaration, executor, declaration.persistent() ? new FailingLog() : null,
                    Long.MAX_VALUE, context);
            }

            @Override
            public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> changed(java.util.List<DefinitionChange.VhostChange> changes) {
                return CompletableFuture.completedFuture(null);
            }
        });
        withBrokenLog.declareQueue("fine", false, Map.of());
        withBrokenLog.declareQueue("broken", true, Map.of());
        withBrokenLog.bind(new Binding("amq.fanout", Destination.queue("fine"), "", Map.of()));
        withBrokenLog.bind(new Binding("amq.fanout", Destination.queue("broken"), "", Map.of()));
        Publisher on = new Publisher(withBrokenLog, loop, publisherConfirms());
        on.publish(text("durable", "amq.fanout", ""), 1); // TestMessages.text messages are durable
        on.publish(text("durable", "amq.fanout", ""), 2);
        loop.runAll();
        assertThat(rejectedRanges).containsExactly(new long[] {1, 2});
        assertThat(ranges).isEmpty();
        assertThat(on.unconfirmed()).isZero();

        // the publisher reuses its confirm records: a refusal does not stick to the next message, nor a count
        withBrokenLog.bind(new Binding("amq.direct", Destination.queue("fine"), "rk", Map.of()));
        withBrokenLog.bind(new Binding("amq.direct", Destination.queue("broken"), "rk", Map.of()));
        on.publish(TestMessages.amqp091(BasicProperties.EMPTY, new byte[1]), 3); // transient
        on.publish(TestMessages.amqp091(BasicProperties.EMPTY, new byte[1]), 4);
        loop.runAll();
        assertThat(ranges).as("transient: both queues take it").containsExactly(new long[] {3, 4});
        on.publish(text("durable", "amq.fanout", ""), 5);
        loop.runAll();
        assertThat(rejectedRanges).containsExactly(new long[] {1, 2}, new long[] {5, 5});
        assertThat(ranges).containsExactly(new long[] {3, 4});
        assertThat(on.unconfirmed()).isZero();
        withBrokenLog.deleteQueue("fine");
        withBrokenLog.deleteQueue("broken");
    }

    @Test
    void aQueueOfTheClusterThatNothingHereReachesRefusesItsMessagesNeverConfirmsThem() {
        // a clustered node that knows the record of a queue homed elsewhere, but has nothing to reach it with now
        // (a replicated queue between two leaders): routed there, a message is refused, not confirmed as unrouted
        vhost.share(new io.skiffmq.core.SharedDefinitions() {
            @Override
            public CompletableFuture<Void> append(String name, DefinitionChange.VhostChange change) {
                vhost.applyShared(change);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public String node() {
                return "here@host";
            }
        });
        vhost.applyShared(new DefinitionChange.QueueHomed("elsewhere", false, Map.of("x-queue-type", "quorum"),
            "there@host", 1));
        vhost.bind(new Binding("amq.fanout", Destination.queue("elsewhere"), "", Map.of()));
        assertThat(publisher.publish(text("m", "amq.fanout", ""), 1)).isEqualTo(Publisher.Routed.ROUTED);
        assertThat(publisher.publish(text("m", "", "elsewhere"), 2)).isEqualTo(Publisher.Routed.ROUTED);
        loop.runAll();
        assertThat(ranges).as("confirmed").isEmpty();
        assertThat(unavailable).containsExactly("1 elsewhere", "2 elsewhere");
        assertThat(publisher.unconfirmed()).isZero();
    }

    /**
     * Publishing with confirms to one queue among 20,000, each bound to {@code amq.direct}, costs about what it costs
     * among ten: the route, the queue's lookup and the confirm do not walk the queues. Measured as this thread's CPU
     * time (the best of several rounds, so the machine's load cannot fail it); a walk of every queue per message
     * would cost thousands of times more, far past the factor allowed here.
     */
    @Test
    void publishingToOneQueueAmongTwentyThousandCostsWhatItCostsAmongTen() {
        long small = publishCost(10);
        long large = publishCost(20_000);
        assertThat(large).as("CPU ns for a batch of publishes: 20,000 queues %d, 10 queues %d", large, small)
            .isLessThan(20 * small);
    }

    /** The least CPU time, over rounds, of 5,000 confirmed publishes to one of {@code count} queues. */
    private long publishCost(int count) {
        VirtualHost host = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
        for (int i = 0; i < count; i++) {
            host.declareQueue("q" + i, false, Map.of());
            host.bind(new Binding("amq.direct", Destination.queue("q" + i), "q" + i, Map.of()));
        }
        Publisher among = new Publisher(host, loop, publisherConfirms());
        String target = "q" + (count / 2);
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long best = Long.MAX_VALUE;
        long tag = 1;
        for (int round = 0; round < 7; round++) {
            long start = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < 5_000; i++) {
                among.publish(text("m", "amq.direct", target), tag++);
            }
            loop.runAll();
            best = Math.min(best, threads.getCurrentThreadCpuTime() - start);
            assertThat(among.unconfirmed()).isZero();
            assertThat(host.queue(target).purge().join()).isEqualTo(5_000);
        }
        return best;
    }

    private Publisher.Confirms publisherConfirms() {
        return new Publisher.Confirms() {
            @Override
            public void confirmed(long firstTag, long lastTag) {
                ranges.add(new long[] {firstTag, lastTag});
            }

            @Override
            public void rejected(long firstTag, long lastTag) {
                rejectedRanges.add(new long[] {firstTag, lastTag});
            }

            @Override
            public void unavailable(long tag, String queue) {
                unavailable.add(tag + " " + queue);
            }

            @Override
            public void batchEnd() {
                batches++;
            }
        };
    }

    /** A log whose every write fails, as a closed or broken journal's does. */
    private static final class FailingLog implements QueueLog {
        @Override
        public long publish(long sequence, Message message, long deliveryCount, long expiresAt,
                Runnable durable) {
            throw new IllegalStateException("journal failed");
        }

        @Override
        public long relocate(long sequence, Message message, long deliveryCount, long expiresAt,
                long location) {
            throw new IllegalStateException("journal failed");
        }

        @Override
        public void requeue(long sequence, long location, long deliveryCount) {
        }

        @Override
        public boolean isWritten(long location) {
            return false;
        }

        @Override
        public Message read(long sequence, long location) {
            throw new IllegalStateException("nothing was written");
        }

        @Override
        public void whenWritten(Runnable action) {
        }

        @Override
        public void remove(long sequence, long location) {
        }

        @Override
        public void deleted() {
        }

        @Override
        public void stopped(long[] deliveredBefore, int count) {
        }
    }

    @Test
    void aClosedPublisherHearsNothing() {
        vhost.declareQueue("q", false, Map.of());
        publisher.publish(text("m", "q"), 1);
        publisher.close();
        loop.runAll();
        assertThat(ranges).isEmpty();
        vhost.deleteQueue("q");
    }
}
