package io.skiffmq.server.peer;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A queue homed on another node, as this node uses it (docs/cluster.md, "Messages between nodes"): what is
 * published to it goes over a sender link of this node's {@link PeerConnection} to the home node, and is confirmed
 * once the home node accepted it (as safe as it promises: on its disk for a durable message); each consumer is a
 * receiver link from the home node, paced by the consumer's credit or prefetch, its settlements dispositions. The
 * messages stay on the home node: this object keeps none but those travelling.
 *
 * <p>Every method may be called on any thread; the work runs on the connection's event loop ({@link #executor}),
 * which owns the links. The count of publishes in flight is atomic, as publishers on any loop add to it.
 */
final class RemoteQueue implements Queue {
    /** How a refusal of what is not done across nodes begins (docs/cluster.md). */
    static final String UNSUPPORTED = "not supported from another node than the queue's home: ";

    private final PeerConnection peer;
    private final QueueDeclaration declaration;
    private final QueueCounters counters = new QueueCounters();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ConcurrentLinkedQueue<Runnable> heldPublishers = new ConcurrentLinkedQueue<>();
    /**
     * Publishes in flight to the home node (sent or waiting for link credit, not yet settled there) past which the
     * publishers are held back ({@link #holdPublisher}; {@code cluster-max-in-flight}): with the home node's link
     * credit, what bounds the memory a fast publisher can take here.
     */
    private final int maxInFlight;
    /** Takes what could not be sent (a replicated queue's publishes, held for its next leader); null to refuse. */
    volatile PeerLinks.Unsent unsent;

    RemoteQueue(PeerConnection peer, QueueDeclaration declaration, int maxInFlight) {
        this.peer = peer;
        this.declaration = declaration;
        this.maxInFlight = maxInFlight;
    }

    @Override
    public String name() {
        return declaration.name();
    }

    PeerConnection peer() {
        return peer;
    }

    /** The node it is homed on. */
    String home() {
        return peer.node();
    }

    /** True while this node cannot reach the home node: it is down or inaccessible, as RabbitMQ says. */
    boolean unreachable() {
        return peer.down();
    }

    @Override
    public QueueExecutor executor() {
        return peer.executor();
    }

    @Override
    public QueueDeclaration declaration() {
        return declaration;
    }

    @Override
    public QueueType type() {
        return QueueType.of(declaration.arguments());
    }

    @Override
    public void publish(Message message, PublishConfirm confirm) {
        inFlight.incrementAndGet();
        peer.publish(this, message, confirm, -1);
    }

    /** A message sent before with {@code number} to an old leader, its outcome unknown, sent to this one. */
    void resend(Message message, PublishConfirm confirm, long number) {
        inFlight.incrementAndGet();
        peer.publish(this, message, confirm, number);
    }

    /**
     * A publish was not sent (the link is down), or sent with {@code number} and its link lost before its outcome
     * came: true when {@link #unsent} took it, to be answered later; it stays in flight here until then, so that its
     * publisher stays held back.
     */
    boolean notSent(Message message, PublishConfirm confirm, long number) {
        PeerLinks.Unsent taker = unsent;
        return taker != null && taker.take(message, confirm, this::settledPublish, number);
    }

    /** A publish reached its end (settled by the home node, or failed): publishers held back may go on. */
    void settledPublish() {
        if (inFlight.decrementAndGet() < maxInFlight / 2) {
            Runnable resume;
            while ((resume = heldPublishers.poll()) != null) {
                resume.run();
            }
        }
    }

    @Override
    public boolean holdsPublishers() {
        return true;
    }

    @Override
    public boolean holdPublisher(Runnable resume) {
        if (inFlight.get() < maxInFlight) {
            return false;
        }
        heldPublishers.add(resume);
        if (inFlight.get() < maxInFlight / 2 && heldPublishers.remove(resume)) {
            return false; // settled meanwhile, and nobody will run it
        }
        return true;
    }

    @Override
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority, Selector selector) {
        RemoteConsumer consumer = new RemoteConsumer(this, sink, flow, preSettled, exclusive, priority);
        QueueConsumer handle = QueueConsumer.handle(this, sink, flow, preSettled, consumer);
        consumer.handle = handle;
        if (selector != null) {
            peer.executor().execute(() -> sink.refused(UNSUPPORTED + "a selector of queue '" + name()
                + "', homed on node '" + home() + "'"));
            return handle;
        }
        peer.executor().execute(() -> peer.attach(consumer));
        return handle;
    }

    private static RemoteConsumer of(QueueConsumer consumer) {
        return (RemoteConsumer) consumer.state();
    }

    @Override
    public void cancel(QueueConsumer consumer) {
        peer.run(() -> of(consumer).cancel());
    }

    @Override
    public CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit channelLimit) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        peer.run(() -> {
            of(consumer).limit(channelLimit);
            done.complete(null);
        });
        return done;
    }

    @Override
    public void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        peer.run(() -> of(consumer).flow(deliveryCount, linkCredit, drain, echo));
    }

    @Override
    public void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome) {
        peer.run(() -> of(consumer).settle(firstTag, lastTag, outcome));
    }

    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        CompletableFuture<QueueDelivery> got = new CompletableFuture<>();
        peer.run(() -> of(consumer).get(got));
        return got;
    }

    @Override
    public void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome) {
        peer.run(() -> of(consumer).close(unsettledOutcome));
    }

    @Override
    public void unsubscribe(List<QueueConsumer> consumers, Outcome unsettledOutcome) {
        peer.run(() -> consumers.forEach(c -> of(c).close(unsettledOutcome)));
    }

    @Override
    public int readyCount() {
        return 0; // the home node's (docs/cluster.md)
    }

    @Override
    public int consumerCount() {
        return 0;
    }

    @Override
    public int unackedCount() {
        return 0;
    }

    @Override
    public QueueCounters counters() {
        return counters;
    }

    @Override
    public CompletableFuture<QueueCounts> counts() {
        return peer.counts(this);
    }

    @Override
    public CompletableFuture<Integer> purge() {
        return peer.purge(this);
    }

    @Override
    public CompletableFuture<Void> close() {
        return CompletableFuture.completedFuture(null);
    }

    /** The queue's record was deleted: its consumers here are told, its links go. */
    @Override
    public CompletableFuture<Integer> delete() {
        peer.executor().execute(() -> peer.queueDeleted(this));
        return CompletableFuture.completedFuture(0);
    }

    @Override
    public void whenUnused(Runnable action) {
        // the home node's queue goes unused there, not here
    }

    /** The home node cannot be reached: what RabbitMQ says for a queue whose node is down. */
    BrokerException homeDown(String vhost) {
        return new BrokerException(BrokerException.Kind.NOT_FOUND, "home node '" + home() + "' of durable queue '"
            + name() + "' in vhost '" + vhost + "' is down or inaccessible");
    }
}
