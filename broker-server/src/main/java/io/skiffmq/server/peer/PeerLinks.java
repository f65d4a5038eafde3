package io.skiffmq.server.peer;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.skiffmq.cluster.NodeAddress;
import io.skiffmq.cluster.NodeTls;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.Broker;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;

/**
 * This node's links to the queues homed on the other nodes of its cluster (docs/cluster.md, "Messages between
 * nodes"): one AMQP 1.0 connection per other node and virtual host ({@link PeerConnection}), opened when a queue
 * homed there is first used and again whenever it is lost, over mutual TLS whose trust is the cluster secret; and
 * the {@link RemoteQueue}s that stand here for those queues.
 *
 * <p>Thread-safe: the connections are made once per key in a concurrent map, each then owned by its event loop.
 */
public final class PeerLinks implements AutoCloseable {
    /**
     * The user another node's connection is, once its TLS handshake proved it holds the secret: unrestricted, as
     * RabbitMQ's nodes act for their clients without permission checks of their own (the client's node checked).
     * A space and parentheses keep it apart from the names operators give users in practice.
     */
    public static final String NODE_USER = "skiffmq-node (cluster peer)";
    /**
     * The attach property by which another node's 0-9-1 consumer asks for a queue exclusively (true); heeded on
     * node connections only (RabbitMQ's AMQP 1.0 has no exclusive consumers).
     */
    public static final String EXCLUSIVE_PROPERTY = "skiffmq:exclusive";
    /** A node's message port is its cluster port plus this (docs/cluster.md). */
    public static final int PORT_OFFSET = 1;
    /**
     * The length of the delivery tag of a replicated queue's publish sent to its leader: this node's enqueuer id,
     * its number for the message, and 1 for a resend, else 0 ({@link Unsent}).
     */
    public static final int ENQUEUER_TAG = 17;

    private final Broker broker;
    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelClass;
    private final SslContext clientTls;
    private final Supplier<List<NodeAddress>> members;
    /** Told the name of a node whose open link closed. */
    private final java.util.function.Consumer<String> linkLost;
    private final Map<String, PeerConnection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public PeerLinks(Broker broker, EventLoopGroup group, Class<? extends SocketChannel> channelClass, NodeTls tls,
            Supplier<List<NodeAddress>> members, java.util.function.Consumer<String> linkLost) throws SSLException {
        this.broker = broker;
        this.linkLost = linkLost;
        this.group = group;
        this.channelClass = channelClass;
        this.members = members;
        this.clientTls = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).keyManager(tls.keys())
            .trustManager(tls.trust()).protocols("TLSv1.3").build();
    }

    /** The TLS of the node port: the other end must present a certificate that carries the secret's MAC. */
    public static SslContext serverTls(NodeTls tls) throws SSLException {
        return SslContextBuilder.forServer(tls.keys()).sslProvider(SslProvider.JDK).trustManager(tls.trust())
            .clientAuth(ClientAuth.REQUIRE).protocols("TLSv1.3").build();
    }

    /**
     * What stands here for {@code record}'s queue, in {@code vhost}, homed on another node; null for a stream,
     * which is not reached across nodes yet.
     */
    public Queue remoteQueue(String vhost, QueueHomed record) {
        if (io.skiffmq.core.queue.QueueType.of(record.arguments()) == io.skiffmq.core.queue.QueueType.STREAM) {
            return null; // a stream is read from its own node (docs/cluster.md)
        }
        return new RemoteQueue(connection(record.node(), vhost), record.declaration(),
            broker.config().cluster().maxInFlight());
    }

    /**
     * The queue of that name homed on another node, as this node uses it; null when no queue of that name is homed
     * elsewhere.
     *
     * @throws io.skiffmq.core.BrokerException NOT_FOUND in RabbitMQ's words for a durable queue whose node is down,
     *         when this node cannot reach its home now
     */
    public static Queue remote(io.skiffmq.core.VirtualHost vhost, String name) {
        QueueHomed record = vhost.remoteQueue(name);
        if (record == null) {
            return null;
        }
        Queue proxy = vhost.remoteQueueProxy(name);
        if (!(proxy instanceof RemoteQueue remote) || remote.unreachable()) {
            throw vhost.homeNodeDown(record);
        }
        return proxy;
    }

    /**
     * The counts of a queue homed on another node as that node last reported them (pulled every few seconds while
     * listings ask for them, docs/cluster.md), or null when none are known (not pulled yet, or the node cannot be
     * reached). Asks no node: a listing's cost does not grow with a round trip per queue.
     */
    public static HomeQueueCounts homeCounts(io.skiffmq.core.VirtualHost vhost, String name) {
        if (!(vhost.remoteQueueProxy(name) instanceof RemoteQueue remote)) {
            return null;
        }
        HomeCounts.Pulled counts = remote.peer().homeCounts();
        long[] of = counts == null ? null : counts.of(name);
        return of == null ? null : new HomeQueueCounts(of[0], of[1], of[2], of[3], counts.pulledAt());
    }

    /** A queue's counts on its home node, and when they were taken there ({@link System#currentTimeMillis}). */
    public record HomeQueueCounts(long messages, long ready, long unacknowledged, long consumers, long pulledAt) {
    }

    /** True for a consumer's refusal that says what a queue homed elsewhere does not do (not that it is down). */
    public static boolean unsupported(String refusal) {
        return refusal.startsWith(RemoteQueue.UNSUPPORTED);
    }

    /** True for a refusal of a consumer because the queue's home node has it in exclusive use. */
    public static boolean inExclusiveUse(String refusal) {
        return refusal.startsWith("queue '") && refusal.endsWith("' in exclusive use");
    }

    /**
     * A replicated queue's publishes as a node that is not its leader sends them (docs/quorum-queues.md, "Publishes
     * between two leaders are held"): each numbered when first sent, so that the next leader drops a resend of one it
     * has; and where those go that a link could not send, or sent without learning their outcome.
     */
    public interface Unsent {
        /**
         * Takes a publish back from a link that is gone: true when it took it (the message, its confirm, and
         * {@code released}, run once it is answered), false to refuse it.
         *
         * @param number the number it was sent with, its outcome unknown; negative when it was never sent
         */
        boolean take(io.skiffmq.core.message.Message message, io.skiffmq.core.queue.PublishConfirm confirm,
            Runnable released, long number);

        /** This node's id as an enqueuer of the queue: another for each start. */
        long enqueuer();

        /** The number of the next publish sent to the queue from this node, above all before it. */
        long nextNumber();
    }

    /** Where {@code queue}, when it stands for a queue on another node, sends the publishes it could not send. */
    public static void onUnsent(Queue queue, Unsent unsent) {
        if (queue instanceof RemoteQueue remote) {
            remote.unsent = unsent;
        }
    }

    /**
     * Publishes again a message sent with {@code number} to a replicated queue's old leader, its outcome unknown:
     * to {@code queue}, what stands for the new leader here, which drops it if it has it.
     */
    public static void resend(Queue queue, io.skiffmq.core.message.Message message,
            io.skiffmq.core.queue.PublishConfirm confirm, long enqueuer, long number) {
        if (queue instanceof RemoteQueue remote) {
            remote.resend(message, confirm, number);
        } else {
            queue.publish(message, new io.skiffmq.core.queue.ForwardedConfirm(confirm, enqueuer, number, true));
        }
    }

    /** True for a queue homed on another node that this node cannot reach now. */
    public static boolean unreachable(Queue queue) {
        return queue instanceof RemoteQueue remote && remote.unreachable();
    }

    /** True for a queue homed on another node, used here. */
    public static boolean isRemote(Queue queue) {
        return queue instanceof RemoteQueue;
    }

    /** This node's connection to {@code node} in {@code vhost}, made (and first opened) now when there is none. */
    PeerConnection connection(String node, String vhost) {
        String key = node + '\u0000' + vhost;
        PeerConnection connection = connections.get(key);
        if (connection == null) {
            connection = connections.computeIfAbsent(key, k -> new PeerConnection(this, node, vhost,
                group.next()));
            connection.openSoon();
        }
        return connection;
    }

    /** Where {@code node} takes other nodes' message traffic, or null when it is no member (any more). */
    InetSocketAddress address(String node) {
        List<NodeAddress> known;
        try {
            known = members.get();
        } catch (IllegalStateException e) {
            return null; // between groups (joining another cluster)
        }
        for (NodeAddress member : known) {
            if (member.name().equals(node)) {
                return InetSocketAddress.createUnresolved(member.host(), member.port() + PORT_OFFSET);
            }
        }
        return null;
    }

    Broker broker() {
        return broker;
    }

    EventLoopGroup group() {
        return group;
    }

    Class<? extends SocketChannel> channelClass() {
        return channelClass;
    }

    SslContext clientTls() {
        return clientTls;
    }

    /** A link to {@code node} that was open closed. */
    void linkLost(String node) {
        if (!closed) {
            linkLost.accept(node);
        }
    }

    boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
        connections.values().forEach(PeerConnection::close);
    }
}
