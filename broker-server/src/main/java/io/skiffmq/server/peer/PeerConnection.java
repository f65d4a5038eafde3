package io.skiffmq.server.peer;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.queue.QueueExecutor;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.codec.ReadableBuffer;
import org.apache.qpid.proton.engine.Collector;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.Event;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Sender;
import org.apache.qpid.proton.engine.Session;
import org.apache.qpid.proton.engine.Transport;

/**
 * This node's AMQP 1.0 connection to another node, in one virtual host (docs/cluster.md, "Messages between
 * nodes"), as a client of that node's node port: Qpid proton-j's engine, driven from a Netty channel over mutual
 * TLS whose trust is the cluster secret. It carries a sender link per queue of that node this node publishes to
 * ({@code /queues/<name>}, unsettled: the home node settles once it has the message as safe as it promises) and a
 * receiver link per consumer here ({@link RemoteConsumer}). Opened when first needed and again, every
 * {@link #RETRY_MILLIS}, while it is lost; what was in flight when it is lost fails (publishes are refused, so a
 * 0-9-1 publisher gets a nack; consumers are cancelled, and the home node gets their unsettled messages back).
 *
 * <p>Owned by one event loop: the engine, the links and the channel are touched there only. {@link #down()} is
 * read anywhere; {@link #publish} hands messages over from any thread (a multi-producer queue the loop drains), and
 * {@link #homeCounts} reads the last pulled counts from any thread ({@link HomeCounts}).
 */
final class PeerConnection {
    private static final System.Logger LOG = System.getLogger(PeerConnection.class.getName());
    static final long RETRY_MILLIS = 1000;
    private static final int CONNECT_TIMEOUT_MILLIS = 5000;
    private static final long TICK_MILLIS = 1000;

    private final PeerLinks links;
    private final String node;
    private final String vhost;
    private final EventLoop loop;
    private final QueueExecutor executor;
    /** True once a connection failed, until one is open again. */
    private volatile boolean down;
    /**
     * True while the other node has opened this connection: only the loss of such a link says the node went (a dial
     * that fails may reach a node still starting, which must not cost its groups an election).
     */
    private boolean linked;
    private boolean opening;
    private boolean retrying;
    /** A {@link #pumpLater} is queued on the loop. */
    private boolean pumpQueued;
    private Channel channel;
    private Connection connection;
    private Transport transport;
    private Collector collector;
    private Session session;
    private ScheduledFuture<?> ticks;
    private long nextDeliveryTag;
    private int nextLink;
    /** A sender link per queue published to, with what waits for its credit. */
    private final Map<String, Outgoing> senders = new HashMap<>();
    private final List<RemoteConsumer> consumers = new ArrayList<>();
    /** The home node's /management, for counts and purges; null until first needed. */
    private HomeManagement management;
    /** The home node's counts of its queues, for listings. */
    private final HomeCounts counts;

    /** What was published to one queue and not yet sent: kept until the link has credit. */
    private static final class Outgoing {
        final RemoteQueue queue;
        final Sender link;
        final ArrayDeque<Message> messages = new ArrayDeque<>();
        final ArrayDeque<PublishConfirm> confirms = new ArrayDeque<>();
        /** A resent message's number ({@link PeerLinks.Unsent}), -1 for one sent the first time. */
        final ArrayDeque<Long> numbers = new ArrayDeque<>();

        Outgoing(RemoteQueue queue, Sender link) {
            this.queue = queue;
            this.link = link;
        }
    }

    /** A publish handed over from a publisher's thread, waiting for {@link #sendPublished}. */
    private record Publish(RemoteQueue queue, Message message, PublishConfirm confirm, long number) {
    }

    /**
     * A replicated queue's message sent and not yet settled, kept (its reference with it) so that it can be sent
     * again to the next leader if this link is lost before its outcome comes.
     */
    private record Sent(PublishConfirm confirm, Message message, long number) {
    }

    /**
     * Publishes from every publisher's thread, sent by one task per burst on this loop ({@link #sendPublished}),
     * whose transfers go out in one write and flush.
     */
    private final java.util.Queue<Publish> published = io.netty.util.internal.PlatformDependent.newMpscQueue();
    private final java.util.concurrent.atomic.AtomicBoolean sendQueued =
        new java.util.concurrent.atomic.AtomicBoolean();
    private final Runnable sendPublished = this::sendPublished;
    /** Where a 0-9-1 message is written in its node form before proton-j copies it; owned by the loop. */
    private ByteBuf scratch = io.netty.buffer.Unpooled.buffer(SCRATCH_KEPT);
    private static final int SCRATCH_KEPT = 64 * 1024;

    PeerConnection(PeerLinks links, String node, String vhost, EventLoop loop) {
        this.links = links;
        this.node = node;
        this.vhost = vhost;
        this.loop = loop;
        this.executor = links.broker().loopExecutor(loop);
        this.counts = new HomeCounts(loop, this::pullCounts);
    }

    String node() {
        return node;
    }

    QueueExecutor executor() {
        return executor;
    }

    boolean down() {
        return down;
    }

    void openSoon() {
        loop.execute(this::open);
    }

    /** Makes the engine and dials the node, unless that is done or under way. */
    private void open() {
        if (connection != null || opening || links.closed()) {
            return;
        }
        InetSocketAddress address = links.address(node);
        if (address == null) {
            down = true;
            return;
        }
        opening = true;
        connection = Proton.connection();
        transport = Proton.transport();
        collector = Proton.collector();
        transport.bind(connection);
        connection.collect(collector);
        connection.setContainer(links.broker().config().node());
        connection.setHostname("vhost:" + vhost);
        connection.open();
        session = connection.session();
        session.open();
        Connection engine = connection;
        new Bootstrap().group(loop).channel(links.channelClass())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
            .option(ChannelOption.TCP_NODELAY, true)
            .handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast("tls", links.clientTls().newHandler(ch.alloc(), address.getHostString(),
                        address.getPort()));
                    ch.pipeline().addLast("peer", new Wire(engine));
                }
            })
            .connect(address.getHostString(), address.getPort()).addListener(done -> {
                if (connection != engine) {
                    return; // lost meanwhile, and dialled again
                }
                opening = false;
                if (!done.isSuccess()) {
                    lost("cannot connect to node " + node + ": " + done.cause().getMessage());
                }
            });
    }

    /**
     * The channel's handler: bytes in to the engine, and the end of the socket. A channel outlived by its engine
     * (lost, and another dialled since) changes nothing.
     */
    private final class Wire extends ChannelInboundHandlerAdapter {
        private final Connection engine;

        Wire(Connection engine) {
            this.engine = engine;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            if (connection != engine) {
                ctx.close();
                return;
            }
            channel = ctx.channel();
            ticks = loop.scheduleAtFixedRate(PeerConnection.this::tick, TICK_MILLIS, TICK_MILLIS,
                TimeUnit.MILLISECONDS);
            pump();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (connection != engine) {
                in.release();
                return;
            }
            try {
                while (in.isReadable() && transport != null) {
                    int capacity = transport.capacity();
                    if (capacity <= 0) {
                        ctx.close();
                        return;
                    }
                    ByteBuffer tail = transport.tail();
                    int n = Math.min(capacity, in.readableBytes());
                    int limit = tail.limit();
                    tail.limit(tail.position() + n);
                    in.readBytes(tail);
                    tail.limit(limit);
                    transport.process();
                }
            } finally {
                in.release();
            }
            pump();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (connection == engine) {
                lost("connection to node " + node + " lost");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(System.Logger.Level.DEBUG, "connection to node " + node + ": " + cause);
            ctx.close();
        }
    }

    private void tick() {
        if (transport != null && channel != null) {
            transport.tick(System.currentTimeMillis());
            counts.tick();
            pump();
        }
    }

    /** Handles what the engine has to say, then writes what it has to send. */
    private void pump() {
        if (collector == null) {
            return;
        }
        Event event;
        while (collector != null && (event = collector.peek()) != null) {
            try {
                handle(event);
            } finally {
                if (collector != null) {
                    collector.pop();
                }
            }
        }
        if (channel == null || transport == null) {
            return;
        }
        boolean wrote = false;
        int pending;
        while ((pending = transport.pending()) > 0) {
            // on the heap: the JDK's TLS engine encrypts from an array much faster than from a direct buffer
            ByteBuf out = channel.alloc().heapBuffer(pending);
            out.writeBytes(transport.head());
            transport.pop(pending);
            channel.write(out);
            wrote = true;
        }
        if (wrote) {
            channel.flush();
        }
        if (pending < 0) {
            channel.close();
        }
    }

    private void handle(Event event) {
        switch (event.getType()) {
            case CONNECTION_REMOTE_OPEN -> {
                if (down) {
                    LOG.log(System.Logger.Level.INFO, "connected to node {0} again (vhost ''{1}'')", node, vhost);
                }
                down = false;
                linked = true;
            }
            case CONNECTION_REMOTE_CLOSE -> {
                ErrorCondition error = event.getConnection().getRemoteCondition();
                lost("node " + node + " closed the connection" + (error == null || error.getCondition() == null
                    ? "" : ": " + error.getDescription()));
            }
            case LINK_REMOTE_OPEN -> {
                Link link = event.getLink();
                if (link instanceof Receiver && link.getContext() instanceof RemoteConsumer consumer
                        && link.getRemoteSource() != null) {
                    consumer.attached();
                }
            }
            case LINK_REMOTE_CLOSE, LINK_REMOTE_DETACH -> linkGone(event.getLink());
            case LINK_FLOW -> {
                Link link = event.getLink();
                if (link instanceof Sender && link.getContext() instanceof Outgoing outgoing) {
                    send(outgoing);
                } else if (link instanceof Sender && link.getContext() instanceof HomeManagement requests) {
                    requests.send();
                } else if (link.getContext() instanceof RemoteConsumer consumer) {
                    consumer.flowed();
                }
            }
            case DELIVERY -> {
                Delivery delivery = event.getDelivery();
                if (delivery.getLink() instanceof Receiver) {
                    if (delivery.isReadable() && !delivery.isPartial()
                            && delivery.getLink().getContext() instanceof RemoteConsumer consumer) {
                        consumer.delivered(delivery);
                    } else if (delivery.isReadable() && !delivery.isPartial()
                            && delivery.getLink().getContext() instanceof HomeManagement responses) {
                        responses.responded(delivery);
                    }
                } else if (delivery.getLink().getContext() instanceof Outgoing outgoing
                        && delivery.getContext() != null
                        && (delivery.remotelySettled() || delivery.getRemoteState() != null)) {
                    Object context = delivery.getContext();
                    delivery.setContext(null);
                    delivery.settle();
                    if (context instanceof Sent sent) {
                        resendOrConfirm(outgoing.queue, sent, delivery.getRemoteState());
                    } else if (context instanceof PublishConfirm confirm && confirm != SETTLED) {
                        confirm(outgoing.queue, confirm, delivery.getRemoteState());
                    }
                }
            }
            case TRANSPORT_ERROR, TRANSPORT_CLOSED -> {
                if (channel != null) {
                    channel.close();
                }
            }
            default -> { }
        }
    }

    /** The home node's outcome for a message sent: accepted confirms it; anything else refuses it. */
    private static void confirm(RemoteQueue queue, PublishConfirm confirm, DeliveryState state) {
        if (confirm != NO_CONFIRM) {
            if (state instanceof Accepted) {
                confirm.run();
            } else {
                confirm.refused();
            }
        }
        queue.settledPublish();
    }

    /**
     * A replicated queue's outcome for a message sent: refused as unavailable (its leader did not commit it: deposed,
     * or no majority in time) or released (the node no longer leads it, and has no queue of that name to take it), it
     * is held with its number for the next leader, which drops it if it has it; any other outcome is the publisher's.
     */
    private static void resendOrConfirm(RemoteQueue queue, Sent sent, DeliveryState state) {
        if ((unavailable(state) || state instanceof Released)
                && queue.notSent(sent.message, sent.confirm == NO_CONFIRM ? null : sent.confirm, sent.number)) {
            return;
        }
        sent.message.release();
        confirm(queue, sent.confirm, state);
    }

    /** RabbitMQ's {@code rejected} for a queue that is unavailable, as the home node's {@code IncomingLink} sends it. */
    private static boolean unavailable(DeliveryState state) {
        return state instanceof org.apache.qpid.proton.amqp.messaging.Rejected rejected && rejected.getError() != null
            && rejected.getError().getInfo() != null
            && UNAVAILABLE.equals(rejected.getError().getInfo().get(REASON));
    }

    private static final org.apache.qpid.proton.amqp.Symbol REASON =
        org.apache.qpid.proton.amqp.Symbol.valueOf("reason");
    private static final org.apache.qpid.proton.amqp.Symbol UNAVAILABLE =
        org.apache.qpid.proton.amqp.Symbol.valueOf("unavailable");

    private void linkGone(Link link) {
        if (link.getContext() instanceof RemoteConsumer consumer) {
            consumers.remove(consumer);
            ErrorCondition error = link.getRemoteCondition();
            consumer.lost(error == null || error.getDescription() == null ? "detached by node " + node
                : error.getDescription());
        } else if (link.getContext() instanceof Outgoing outgoing) {
            senders.remove(outgoing.queue.name(), outgoing);
            fail(outgoing);
        } else if (link.getContext() instanceof HomeManagement gone && gone == management) {
            management = null;
            gone.fail(new BrokerException(BrokerException.Kind.NOT_FOUND, "management link detached by " + node));
        }
        if (link.getLocalState() != EndpointState.CLOSED) {
            link.close();
        }
    }

    // ---- publishing -------------------------------------------------------------------------------------------

    /**
     * Sends a message to the queue's home node; any thread. Takes over {@code message}. The burst handed over
     * before the loop gets to it goes as one batch: one task, one write and flush.
     *
     * @param number the number a replicated queue's message was sent with before, -1 when it is sent the first time
     */
    void publish(RemoteQueue queue, Message message, PublishConfirm confirm, long number) {
        published.offer(new Publish(queue, message, confirm, number));
        if (!sendQueued.get() && sendQueued.compareAndSet(false, true)) {
            executor.execute(sendPublished);
        }
    }

    private void sendPublished() {
        sendQueued.set(false); // a publish offered from now on queues another pass
        Publish publish;
        while ((publish = published.poll()) != null) {
            send(publish.queue(), publish.message(), publish.confirm(), publish.number());
        }
        pump();
    }

    /** Sends a message to the queue's home node, on this loop. Takes over {@code message}. */
    private void send(RemoteQueue queue, Message message, PublishConfirm confirm, long number) {
        open();
        if (connection == null) {
            if (!queue.notSent(message, confirm, number)) {
                message.release();
                refuse(queue, confirm);
            }
            return;
        }
        Outgoing outgoing = senders.get(queue.name());
        if (outgoing == null) {
            Sender link = session.sender("publish-" + queue.name() + "-" + nextLink++);
            Target target = new Target();
            target.setAddress(address(queue.name()));
            link.setTarget(target);
            link.setSource(new Source());
            link.setSenderSettleMode(SenderSettleMode.UNSETTLED);
            outgoing = new Outgoing(queue, link);
            link.setContext(outgoing);
            link.open();
            senders.put(queue.name(), outgoing);
        }
        outgoing.messages.add(message);
        outgoing.confirms.add(confirm == null ? NO_CONFIRM : confirm);
        outgoing.numbers.add(number);
        send(outgoing);
    }

    /** The confirm of a publish nobody waits for. */
    private static final PublishConfirm NO_CONFIRM = () -> { };
    /** A delivery's context once its confirm was answered (refused when its link went). */
    private static final PublishConfirm SETTLED = () -> { };

    /**
     * Sends what waits, as far as the link's credit goes. The message's bytes are copied once, into proton-j (a
     * 0-9-1 message is written in its node form into {@link #scratch} first); the delivery's context is its
     * confirm, the link's its queue. A replicated queue's message is numbered in its delivery tag (the node's
     * enqueuer id, the number, whether it is a resend) and kept until settled ({@link Sent}).
     */
    private void send(Outgoing outgoing) {
        Sender link = outgoing.link;
        while (link.getCredit() > 0 && !outgoing.messages.isEmpty()) {
            Message message = outgoing.messages.poll();
            PublishConfirm confirm = outgoing.confirms.poll();
            long number = outgoing.numbers.poll();
            PeerLinks.Unsent numbering = outgoing.queue.unsent;
            boolean kept = numbering != null;
            try {
                Delivery delivery;
                if (kept) {
                    boolean resent = number >= 0;
                    if (!resent) {
                        number = numbering.nextNumber();
                    }
                    delivery = link.delivery(numberedTag(numbering.enqueuer(), number, resent));
                } else {
                    delivery = link.delivery(tag(nextDeliveryTag++));
                }
                ByteBuf bytes;
                if (NodeForm.carries(message)) {
                    bytes = scratch.clear();
                    NodeForm.writeTo(bytes, message, true, 0, 0);
                    delivery.setMessageFormat(NodeForm.AMQP_091);
                } else {
                    bytes = message.toAmqp10().bytes(); // as the publisher sent it
                }
                delivery.setContext(kept ? new Sent(confirm, message, number) : confirm);
                link.send(ReadableBuffer.ByteBufferReader.wrap(bytes.nioBuffer()));
                link.advance();
                if (scratch.capacity() > SCRATCH_KEPT) {
                    scratch = io.netty.buffer.Unpooled.buffer(SCRATCH_KEPT); // a large message's is not kept
                }
            } finally {
                if (!kept) {
                    message.release();
                }
            }
        }
    }

    private static byte[] tag(long n) {
        return ByteBuffer.allocate(Long.BYTES).putLong(n).array();
    }

    /** A replicated queue's delivery tag ({@link PeerLinks#ENQUEUER_TAG}): the array alone, which proton-j keeps. */
    private static byte[] numberedTag(long enqueuer, long number, boolean resent) {
        byte[] tag = new byte[PeerLinks.ENQUEUER_TAG];
        for (int i = 0; i < Long.BYTES; i++) { // big-endian, as the home node's IncomingLink reads them
            tag[i] = (byte) (enqueuer >>> (56 - 8 * i));
            tag[Long.BYTES + i] = (byte) (number >>> (56 - 8 * i));
        }
        tag[2 * Long.BYTES] = (byte) (resent ? 1 : 0);
        return tag;
    }

    /** The home node could not take it: refused as a queue that is unavailable. */
    private static void refuse(RemoteQueue queue, PublishConfirm confirm) {
        if (confirm != null && confirm != NO_CONFIRM) {
            confirm.unavailable(queue.name());
        }
        queue.settledPublish();
    }

    private static void failWaiting(Outgoing outgoing) {
        Message message;
        while ((message = outgoing.messages.poll()) != null) {
            notSent(outgoing.queue, message, outgoing.confirms.poll(), outgoing.numbers.poll());
        }
    }

    /** Hands a message back for a replicated queue's next leader, or refuses it. */
    private static void notSent(RemoteQueue queue, Message message, PublishConfirm confirm, long number) {
        if (!queue.notSent(message, confirm == NO_CONFIRM ? null : confirm, number)) {
            message.release();
            refuse(queue, confirm);
        }
    }

    // ---- consuming --------------------------------------------------------------------------------------------

    void attach(RemoteConsumer consumer) {
        open();
        if (connection == null || consumer.closed()) {
            consumer.lost(consumer.queue.homeDown(vhost).getMessage());
            return;
        }
        Receiver link = session.receiver("consume-" + consumer.queue.name() + "-" + nextLink++);
        Source source = new Source();
        source.setAddress(address(consumer.queue.name()));
        link.setSource(source);
        link.setTarget(new Target());
        if (consumer.preSettled) {
            link.setSenderSettleMode(SenderSettleMode.SETTLED);
        }
        // passed on as the home node's own consumers give them (docs/cluster.md)
        Map<org.apache.qpid.proton.amqp.Symbol, Object> properties = new HashMap<>();
        if (consumer.priority != 0) {
            properties.put(org.apache.qpid.proton.amqp.Symbol.valueOf(RemoteConsumer.PRIORITY_PROPERTY),
                consumer.priority);
        }
        if (consumer.exclusive) {
            properties.put(org.apache.qpid.proton.amqp.Symbol.valueOf(PeerLinks.EXCLUSIVE_PROPERTY), true);
        }
        if (!properties.isEmpty()) {
            link.setProperties(properties);
        }
        link.setContext(consumer);
        consumer.receiver = link;
        consumers.add(consumer);
        link.open();
        pump();
    }

    /** Runs a consumer's call on this loop; then its flows, dispositions and detach go out. */
    void run(Runnable task) {
        loop.execute(() -> {
            task.run();
            pumpLater();
        });
    }

    /**
     * A {@link #pump} once the tasks queued on the loop now have run: the transfers and dispositions of a burst of
     * publishes or acknowledgements go out in one write and one flush.
     */
    private void pumpLater() {
        if (!pumpQueued) {
            pumpQueued = true;
            loop.execute(() -> {
                pumpQueued = false;
                pump();
            });
        }
    }

    /** The queue's record was deleted: its consumers are told, its sender link goes. */
    void queueDeleted(RemoteQueue queue) {
        for (RemoteConsumer consumer : new ArrayList<>(consumers)) {
            if (consumer.queue == queue) {
                consumers.remove(consumer);
                if (consumer.receiver != null) {
                    consumer.receiver.close();
                }
                consumer.lost("queue deleted");
            }
        }
        Outgoing outgoing = senders.get(queue.name());
        if (outgoing != null && outgoing.queue == queue) {
            senders.remove(queue.name());
            fail(outgoing);
            outgoing.link.close();
        }
        pump();
    }

    /** The queue's ready messages and consumers, as its home node counts them. */
    CompletableFuture<QueueCounts> counts(RemoteQueue queue) {
        return manage("GET", address(queue.name()), () -> queue.homeDown(vhost)).thenApply(body -> new QueueCounts(
            (int) HomeManagement.number((Map<?, ?>) body, "message_count"),
            (int) HomeManagement.number((Map<?, ?>) body, "consumer_count"), 0));
    }

    /** Purges the queue on its home node; completes with the number of messages dropped there. */
    CompletableFuture<Integer> purge(RemoteQueue queue) {
        return manage("DELETE", address(queue.name()) + "/messages", () -> queue.homeDown(vhost))
            .thenApply(body -> (int) HomeManagement.number((Map<?, ?>) body, "message_count"));
    }

    // ---- counts for listings ----------------------------------------------------------------------------------

    /** The home node's counts of its queues in this virtual host, as last pulled ({@link HomeCounts}); null for none. */
    HomeCounts.Pulled homeCounts() {
        return down ? null : counts.read();
    }

    /** One request for the counts of every queue homed there ({@code GET /queues}, node connections only), on the loop. */
    private CompletableFuture<Object> pullCounts() {
        if (connection == null || down) {
            return null;
        }
        return manage("GET", "/queues", () -> new BrokerException(BrokerException.Kind.NOT_FOUND, "node " + node
            + " is down"));
    }

    private CompletableFuture<Object> manage(String method, String path,
            java.util.function.Supplier<BrokerException> homeDown) {
        CompletableFuture<Object> answered = new CompletableFuture<>();
        loop.execute(() -> {
            open();
            if (connection == null) {
                answered.completeExceptionally(homeDown.get());
                return;
            }
            if (management == null) {
                management = new HomeManagement(session, "management-" + nextLink++);
            }
            management.request(method, path).whenComplete((body, failure) -> {
                if (failure == null) {
                    answered.complete(body);
                } else {
                    answered.completeExceptionally(failure instanceof BrokerException ? failure
                        : homeDown.get());
                }
            });
            pump();
        });
        return answered;
    }

    /** RabbitMQ's v2 address of a queue: {@code /queues/} and the name, percent-encoded. */
    static String address(String queue) {
        return "/queues/" + URLEncoder.encode(queue, StandardCharsets.UTF_8).replace("+", "%20");
    }

    // ---- losing it --------------------------------------------------------------------------------------------

    /**
     * The connection failed or ended: publishes in flight are refused, consumers lost, and it is dialled again in
     * {@link #RETRY_MILLIS}.
     */
    private void lost(String reason) {
        if (connection == null) {
            return;
        }
        if (!down) {
            LOG.log(System.Logger.Level.WARNING, "{0} (vhost ''{1}''): queues homed there are unreachable from"
                + " this node", reason, vhost);
        }
        if (linked) {
            linked = false;
            links.linkLost(node);
        }
        down = true;
        if (ticks != null) {
            ticks.cancel(false);
            ticks = null;
        }
        for (Outgoing outgoing : senders.values()) {
            fail(outgoing);
        }
        senders.clear();
        if (management != null) {
            management.fail(new BrokerException(BrokerException.Kind.NOT_FOUND, reason));
            management = null;
        }
        List<RemoteConsumer> gone = new ArrayList<>(consumers);
        consumers.clear();
        Channel closing = channel;
        channel = null;
        connection = null;
        opening = false;
        transport = null;
        collector = null;
        session = null;
        if (closing != null) {
            closing.close();
        }
        for (RemoteConsumer consumer : gone) {
            consumer.lost(consumer.queue.homeDown(vhost).getMessage());
        }
        if (!retrying && !links.closed()) {
            retrying = true;
            loop.schedule(() -> {
                retrying = false;
                open();
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * A sender link is gone: what was sent and not settled, its outcome unknown, is refused (RabbitMQ nacks what it
     * cannot confirm), or for a replicated queue held with its number for the next leader, which drops what it has;
     * then what waits for credit is refused or held, behind it.
     */
    private static void fail(Outgoing outgoing) {
        for (Delivery delivery = outgoing.link.head(); delivery != null; delivery = delivery.next()) {
            Object context = delivery.getContext();
            if (context instanceof Sent sent) {
                delivery.setContext(SETTLED);
                notSent(outgoing.queue, sent.message, sent.confirm, sent.number);
            } else if (context instanceof PublishConfirm confirm && confirm != SETTLED) {
                delivery.setContext(SETTLED);
                refuse(outgoing.queue, confirm);
            }
        }
        failWaiting(outgoing);
    }

    void close() {
        loop.execute(() -> {
            if (channel != null) {
                channel.close();
            }
        });
    }
}
