package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.ChannelMethod;
import io.skiffmq.codec.amqp091.ConfirmMethod;
import io.skiffmq.codec.amqp091.ExchangeMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.MethodCodec;
import io.skiffmq.codec.amqp091.QueueMethod;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.codec.amqp091.TxMethod;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.config.ConsumerTimeout;
import io.skiffmq.server.connection.ChannelInfo;
import io.skiffmq.server.connection.ScopeErrors;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.server.cluster.ReplicatedQueues;
import io.skiffmq.server.peer.PeerLinks;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * An AMQP 0-9-1 channel: its methods, consumers and {@code basic.get}, and acks by delivery tag. Published
 * messages are put together by {@link ContentAssembler} and routed by {@link ChannelPublishing} (confirms,
 * transactions); exchange and queue methods are {@link TopologyMethods}'. Errors are thrown as {@link Amqp091Exception}; the connection closes this channel for
 * a soft one and itself for a hard one.
 *
 * <p>States: open, then closing once we sent {@code channel.close} (every frame but {@code close-ok} and
 * {@code close} is then dropped), then gone. Owned by the connection's event loop, as are its consumers.
 */
final class Amqp091Channel {
    private static final System.Logger LOG = System.getLogger(Amqp091Channel.class.getName());

    private final Amqp091ConnectionHandler connection;
    private final int number;
    private final VirtualHost vhost;
    private final FrameOutput output;
    private final TopologyMethods topology;
    private final DeliveryTags deliveryTags = new DeliveryTags();
    private final Map<String, ChannelConsumer> consumers = new LinkedHashMap<>();
    /** Consumers cancelled while deliveries of theirs were unacked: their subscriptions stay until those are settled. */
    private final List<ChannelConsumer> cancelled = new ArrayList<>();
    /** {@code basic.get} subscriptions, by queue, for acked and no-ack gets. */
    private final Map<Queue, QueueGetter> getters = new HashMap<>();
    private boolean closing;
    private int prefetch;
    /** The channel-wide prefetch ({@code basic.qos global}), or null. */
    private PrefetchLimit channelLimit;
    private final ContentAssembler content;
    private final ChannelPublishing publishing;
    /** The last {@code basic.publish} received: the next one with the same arguments is decoded as this record. */
    private BasicMethod.Publish lastPublish;
    private String lastDeclaredQueue = "";
    /** Direct reply-to: the consumer tag and the channel's reply address, or null. */
    private String replyConsumerTag;
    private String replyAddress;

    Amqp091Channel(Amqp091ConnectionHandler connection, int number, VirtualHost vhost) {
        this.connection = connection;
        this.number = number;
        this.vhost = vhost;
        this.output = connection.output();
        this.topology = new TopologyMethods(this, vhost);
        this.content = new ContentAssembler(connection.config().maxMessageSize());
        this.publishing = new ChannelPublishing(this, vhost);
    }

    /** What the HTTP API shows of the channel. */
    ChannelInfo describe() {
        return new ChannelInfo(number, prefetch, deliveryTags.outstanding(),
            publishing.confirming(), publishing.transaction() != null, consumers.values().stream()
                .map(c -> new ChannelInfo.Consumer(c.tag(), c.queue().name(), !c.noAck(), prefetch))
                .toList());
    }

    int number() {
        return number;
    }

    QueueExecutor executor() {
        return connection.executor();
    }

    Amqp091ConnectionHandler connection() {
        return connection;
    }

    boolean closing() {
        return closing;
    }

    void flushLater() {
        connection.flushLater();
    }

    boolean writable() {
        return output.isWritable();
    }

    void reply(Method method) {
        if (!closing) {
            output.method(number, method);
        }
    }

    /** {@link Amqp091ConnectionHandler#await} for this channel. */
    <T> void await(CompletableFuture<T> future, Method cause, java.util.function.Consumer<T> then) {
        connection.await(this, future, cause, then);
    }

    /** {@link Amqp091ConnectionHandler#offload} for this channel. */
    <T> void offload(java.util.function.Supplier<T> work, Method cause, java.util.function.Consumer<T> then) {
        connection.offload(this, work, cause, then);
    }

    String lastDeclaredQueue() {
        return lastDeclaredQueue;
    }

    void lastDeclaredQueue(String name) {
        lastDeclaredQueue = name;
    }

    // ---- frames ---------------------------------------------------------------------------------------------

    /** One frame for this channel; the caller releases it. */
    void onFrame(Amqp091Frame frame) throws Amqp091DecodeException {
        if (closing) {
            // after our channel.close only close-ok (or a crossing close) counts [4.2.2 / 1.5.2.5]
            if (frame.type() == Amqp091Frame.TYPE_METHOD) {
                Method method = MethodCodec.decode(frame.payload());
                if (method instanceof ChannelMethod.CloseOk) {
                    connection.channelGone(this);
                } else if (method instanceof ChannelMethod.Close) {
                    output.method(number, ChannelMethod.CloseOk.INSTANCE);
                }
            }
            return;
        }
        switch (frame.type()) {
            case Amqp091Frame.TYPE_METHOD -> {
                content.checkNoContentExpected();
                Method method = MethodCodec.decode(frame.payload(), lastPublish);
                if (method instanceof BasicMethod.Publish publish) {
                    lastPublish = publish;
                }
                onMethod(method);
            }
            case Amqp091Frame.TYPE_HEADER -> received(content.header(frame.payload()));
            case Amqp091Frame.TYPE_BODY -> received(content.body(frame.payload()));
            default -> throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null, "frame type %d on channel %d",
                frame.type(), number);
        }
    }

    /** True while the content of a published message is still to come. */
    boolean receivingContent() {
        return content.inProgress();
    }

    /** A message whose last frame just came, or null. */
    private void received(Amqp091Message message) {
        if (message != null) {
            publishing.received(message, content.completed());
        }
    }

    private void onMethod(Method method) {
        if (method instanceof BasicMethod.Publish publish) {
            if (publish.immediate()) {
                // RabbitMQ dropped immediate in 3.0
                throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, publish, "immediate=true");
            }
            content.start(publish);
        } else if (method instanceof BasicMethod.Ack ack) {
            settle(ack.deliveryTag(), ack.multiple(), Outcome.ACCEPTED, ack);
        } else if (method instanceof BasicMethod basic) {
            onBasic(basic);
        } else if (method instanceof QueueMethod || method instanceof ExchangeMethod) {
            topology.onMethod(method);
        } else if (method instanceof ChannelMethod channel) {
            onChannelMethod(channel);
        } else if (method instanceof ConfirmMethod.Select select) {
            publishing.confirmSelect(select);
        } else if (method instanceof TxMethod tx) {
            publishing.onTx(tx);
        } else {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "%s is not for a client to send on a channel",
                method.name());
        }
    }

    private void onChannelMethod(ChannelMethod method) {
        if (method instanceof ChannelMethod.Close close) {
            if (close.replyCode() != ReplyCode.REPLY_SUCCESS.code()) {
                LOG.log(System.Logger.Level.DEBUG, "client closed channel {0}: {1} {2}", number, close.replyCode(),
                    close.replyText());
            }
            output.method(number, ChannelMethod.CloseOk.INSTANCE);
            release();
            connection.channelGone(this);
        } else if (method instanceof ChannelMethod.Flow flow) {
            if (!flow.active()) {
                // RabbitMQ stopped honouring a client's flow in 3.3 (prefetch does the job)
                throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, flow, "active=false");
            }
            reply(new ChannelMethod.FlowOk(true));
        } else if (method instanceof ChannelMethod.Open) {
            throw Amqp091Exception.of(ReplyCode.CHANNEL_ERROR, method, "second 'channel.open' seen");
        } else {
            // flow-ok (we never send flow), open-ok, close-ok without our close
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "unexpected %s", method.name());
        }
    }

    private static Outcome requeueOrReject(boolean requeue) {
        return requeue ? Outcome.MODIFIED_FAILED : Outcome.REJECTED;
    }

    private void onBasic(BasicMethod method) {
        if (method instanceof BasicMethod.Nack nack) {
            // a requeue counts as a failed delivery (x-delivery-limit), as RabbitMQ 4 counts it
            settle(nack.deliveryTag(), nack.multiple(), requeueOrReject(nack.requeue()), nack);
        } else if (method instanceof BasicMethod.Reject reject) {
            settle(reject.deliveryTag(), false, requeueOrReject(reject.requeue()), reject);
        } else if (method instanceof BasicMethod.Get get) {
            onGet(get);
        } else if (method instanceof BasicMethod.Consume consume) {
            onConsume(consume);
        } else if (method instanceof BasicMethod.Cancel cancel) {
            ChannelConsumer consumer = removeConsumer(cancel.consumerTag());
            if (consumer != null) {
                if (consumer.cancel()) {
                    cancelled.add(consumer); // its unacked deliveries are still the channel's
                }
            } else if (cancel.consumerTag().equals(replyConsumerTag)) {
                connection.directReplyTo().remove(replyAddress);
                replyConsumerTag = null;
                replyAddress = null;
            }
            if (!cancel.noWait()) {
                reply(new BasicMethod.CancelOk(cancel.consumerTag()));
            }
        } else if (method instanceof BasicMethod.Qos qos) {
            onQos(qos);
        } else if (method instanceof BasicMethod.Recover recover) {
            recover(recover.requeue(), recover);
            reply(BasicMethod.RecoverOk.INSTANCE);
        } else if (method instanceof BasicMethod.RecoverAsync recover) {
            recover(recover.requeue(), recover);
        } else {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "%s is not for a client to send",
                method.name());
        }
    }

    // ---- acks -----------------------------------------------------------------------------------------------

    /** An ack, nack or reject: settled now, or in a transaction held until the commit (checked now all the same). */
    private void settle(long tag, boolean multiple, Outcome outcome, Method cause) {
        try {
            if (publishing.transaction() != null) {
                deliveryTags.hold(tag, multiple, outcome);
            } else {
                deliveryTags.settle(tag, multiple, outcome);
            }
        } catch (DeliveryTags.UnknownTagException e) {
            throw unknownTag(tag, cause);
        }
    }

    /** {@code tx.commit}: the acks, nacks and rejects the transaction held are applied. */
    void commitSettlements() {
        deliveryTags.settleHeld();
    }

    /** {@code tx.rollback}: the deliveries the transaction's acks held are unacked again. */
    void rollbackSettlements() {
        deliveryTags.unholdAll();
    }

    private static Amqp091Exception unknownTag(long tag, Method cause) {
        return Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, cause, "unknown delivery tag %d", tag);
    }

    private void recover(boolean requeue, Method cause) {
        if (!requeue) {
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, cause, "requeue=false");
        }
        deliveryTags.settleAll(Outcome.RELEASED);
    }

    // ---- consumers ------------------------------------------------------------------------------------------

    private void onQos(BasicMethod.Qos qos) {
        if (qos.prefetchSize() != 0) {
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, qos, "prefetch_size!=0 (%d)", qos.prefetchSize());
        }
        if (!qos.global()) {
            prefetch = qos.prefetchCount(); // for the consumers to come, as rabbit_channel's consumer_prefetch
        } else if (channelLimit != null) {
            channelLimit.limit(qos.prefetchCount()); // 0: none, but the count goes on, for a limit set again
        } else if (qos.prefetchCount() > 0) {
            // RabbitMQ reads global as "shared by the channel's consumers"; the spec said "the connection's"
            channelLimit = new PrefetchLimit(qos.prefetchCount());
            limitConsumers(qos);
            return;
        }
        reply(BasicMethod.QosOk.INSTANCE);
    }

    /**
     * The first channel-wide limit: the channel's consumers, cancelled ones with deliveries unacked too, wait for it
     * from now on and bring what they hold unacked, as rabbit_limiter's count starts at the channel's unacked ones;
     * {@code qos-ok} goes once every queue has done so. {@code basic.get}s never count (rabbit_channel counts those
     * outstanding when the limit comes, then never uncounts them).
     */
    private void limitConsumers(BasicMethod.Qos qos) {
        List<CompletableFuture<Void>> limited = new ArrayList<>();
        for (ChannelConsumer consumer : consumers.values()) {
            limited.add(consumer.limit(channelLimit));
        }
        for (ChannelConsumer consumer : cancelled) {
            limited.add(consumer.limit(channelLimit));
        }
        await(CompletableFuture.allOf(limited.toArray(CompletableFuture[]::new)), qos,
            done -> reply(BasicMethod.QosOk.INSTANCE));
    }

    private void onConsume(BasicMethod.Consume consume) {
        String queueName = topology.queueName(consume.queue(), consume);
        if (DirectReplyTo.QUEUE.equals(queueName)) {
            connection.directReplyTo().consume(this, consume);
            return;
        }
        ChannelPermits.queue(connection.access(), Permission.READ, queueName, consume);
        Queue queue = followingLeader(queueName, consume);
        String tag = consume.consumerTag().isEmpty() ? generateTag() : consume.consumerTag();
        if (hasConsumer(tag)) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, consume, "attempt to reuse consumer tag '%s'", tag);
        }
        if (queue instanceof StreamQueue stream) {
            consumeStream(consume, stream, tag);
            return;
        }
        int priority = consumerPriority(consume, queueName);
        if (queue.type() == QueueType.QUORUM && channelLimit != null && channelLimit.limit() > 0) {
            // rabbit_quorum_queue:consume/3 refuses a channel whose limiter is active; rabbit_channel's words
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, consume,
                "queue '%s' in vhost '%s' does not support global qos", queueName, vhost.name());
        }
        // without a prefetch of its own, paced by credit the channel grants; a channel-wide limit on top of either
        ConsumerFlow flow = consume.noAck() || prefetch == 0 ? ConsumerFlow.credit(channelLimit)
            : ConsumerFlow.prefetch(prefetch, channelLimit);
        ChannelConsumer consumer = new ChannelConsumer(this, tag, queue, consume.noAck(), flow,
            consume.noWait());
        addConsumer(consumer);
        consumer.subscribe(flow, consume.exclusive(), priority);
        connection.suspend(); // until the queue answers: consume-ok goes before any delivery
    }

    /**
     * The queue a consumer subscribes to: for a replicated quorum queue, one that follows its leader (and answers
     * RabbitMQ's 541 without a majority), even while no leader is reached from here; else the queue found.
     */
    private Queue followingLeader(String queueName, BasicMethod.Consume consume) {
        var replicated = connection.replicatedQueues();
        Queue local = vhost.queue(queueName);
        Queue following = replicated == null || (local != null && local.type() != QueueType.QUORUM) ? null
            : replicated.following(vhost, queueName, local);
        return following != null ? following : topology.existingQueue(queueName, consume);
    }

    /**
     * A consumer of a stream, with RabbitMQ 4's rules ({@code rabbit_stream_queue:consume/3}): its arguments first
     * (the offset to start from, filters), then a prefetch is required (406), automatic acknowledgement is refused
     * (540) and so is a channel-wide limit (540). Acks only give its prefetch back.
     */
    private void consumeStream(BasicMethod.Consume consume, StreamQueue stream, String tag) {
        StreamConsumerArguments arguments;
        try {
            arguments = stream.consumerArguments(consume.arguments());
        } catch (io.skiffmq.core.BrokerException e) {
            throw Amqp091Exception.of(e, consume);
        }
        String queue = "queue '" + stream.name() + "' in vhost '" + vhost.name() + "'";
        if (prefetch == 0) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, consume,
                "consumer prefetch count is not set for stream %s", queue);
        }
        if (consume.noAck()) {
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, consume,
                "automatic acknowledgement not supported by stream %s", queue);
        }
        if (channelLimit != null && channelLimit.limit() > 0) {
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, consume, "%s does not support global qos", queue);
        }
        ConsumerFlow flow = ConsumerFlow.prefetch(prefetch, null);
        ChannelConsumer consumer = new ChannelConsumer(this, tag, stream, false, flow, consume.noWait());
        addConsumer(consumer);
        consumer.subscribe(flow, arguments);
        connection.suspend(); // until the stream answers: consume-ok goes before any delivery
    }

    /**
     * The {@code x-priority} argument (RabbitMQ's consumer priorities), 0 without one; refused in
     * {@code rabbit_amqqueue:check_consume_arguments/3}'s words when it is no integer (a void one included).
     */
    private int consumerPriority(BasicMethod.Consume consume, String queue) {
        if (!consume.arguments().containsKey("x-priority")) {
            return 0;
        }
        Object priority = consume.arguments().get("x-priority");
        if (priority instanceof Integer || priority instanceof Long || priority instanceof Short
                || priority instanceof Byte) {
            long value = ((Number) priority).longValue();
            return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
        }
        throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, consume,
            "invalid arg 'x-priority' for queue '%s' in vhost '%s': \"expected integer, got %s\"", queue,
            vhost.name(), HeaderValues.fieldType(priority));
    }

    static String generateTag() {
        return io.skiffmq.core.queue.QueueDeclaration.generateName("amq.ctag-");
    }

    boolean hasConsumer(String tag) {
        return consumers.containsKey(tag) || tag.equals(replyConsumerTag);
    }

    /** The channel consumes from direct reply-to: replies to {@code address} come to consumer {@code tag}. */
    void replyConsumer(String tag, String address) {
        replyConsumerTag = tag;
        replyAddress = address;
    }

    String replyAddress() {
        return replyAddress;
    }

    /** A consumer begins: in the channel's table and in the connection's count of consumers. */
    private void addConsumer(ChannelConsumer consumer) {
        consumers.put(consumer.tag(), consumer);
        connection.counters().consumers(1);
    }

    /** The consumer of {@code tag} ends (cancelled, refused, its queue gone), or null when there is none. */
    private ChannelConsumer removeConsumer(String tag) {
        ChannelConsumer consumer = consumers.remove(tag);
        if (consumer != null) {
            connection.counters().consumers(-1);
        }
        return consumer;
    }

    void consumeAccepted(ChannelConsumer consumer) {
        if (!consumer.noWait()) {
            reply(new BasicMethod.ConsumeOk(consumer.tag()));
        }
        connection.resume();
    }

    void consumeRefused(ChannelConsumer consumer, String reason) {
        removeConsumer(consumer.tag());
        connection.resume();
        BasicMethod.Consume consume = new BasicMethod.Consume(consumer.queue().name(), consumer.tag(), false,
            consumer.noAck(), false, false, Map.of());
        if (ReplicatedQueues.noMajority(reason)) {
            // RabbitMQ 4.0's channel fails on the checkout's timeout (541); these are 4.1's words for it
            connection.channelError(this, Amqp091Exception.of(ReplyCode.INTERNAL_ERROR, consume, "%s", reason));
            return;
        }
        if (ReplicatedQueues.remote(consumer.queue()) && !PeerLinks.inExclusiveUse(reason)) {
            // homed on another node: it cannot do this across nodes, or could not be reached (RabbitMQ's 404)
            connection.channelError(this, Amqp091Exception.of(PeerLinks.unsupported(reason)
                ? ReplyCode.ACCESS_REFUSED : ReplyCode.NOT_FOUND, consume, "%s", reason));
            return;
        }
        // RabbitMQ's text, whichever of the two rules refused it
        connection.channelError(this, Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, consume,
            "queue '%s' in vhost '%s' in exclusive use", consumer.queue().name(), vhost.name()));
    }

    /** A cancelled consumer's last unacked delivery was settled (or its queue went): its subscription is gone. */
    void cancelledConsumerDone(ChannelConsumer consumer) {
        cancelled.remove(consumer);
    }

    /** The consumer's queue was deleted: the client hears of it by a {@code basic.cancel} when it asked to. */
    void consumerQueueDeleted(ChannelConsumer consumer) {
        removeConsumer(consumer.tag());
        consumer.close();
        if (connection.clientCapability("consumer_cancel_notify")) {
            reply(new BasicMethod.Cancel(consumer.tag(), true));
            connection.flushLater();
        }
    }

    /** A delivery for one of this channel's consumers. */
    void deliver(ChannelConsumer consumer, QueueDelivery delivery) {
        if (closing) {
            delivery.message().release(); // the consumer's unsubscribe puts it back
            return;
        }
        Message message = counted(delivery);
        try {
            connection.counters().delivered(false, consumer.noAck(), !delivery.firstAcquirer());
            long tag = consumer.noAck() ? deliveryTags.add(null, delivery.tag(), 0)
                : deliveryTags.add(consumer, delivery.tag(), System.nanoTime());
            output.deliver(number, consumer.tag(), tag, !delivery.firstAcquirer(), message);
        } finally {
            message.release();
        }
    }

    /**
     * The delivery's message, with the {@code x-delivery-count} header when a quorum queue redelivers it (RabbitMQ
     * 4.0 adds its count of returns once above 0); the reference the delivery gave is passed on or released here.
     */
    private static Message counted(QueueDelivery delivery) {
        Message message = delivery.message();
        if (delivery.returns() <= 0) {
            return message;
        }
        try {
            return message.toAmqp091().withDeliveryCount(delivery.returns());
        } finally {
            message.release();
        }
    }

    /** Writes a message that is not from a queue (direct reply-to): pre-settled, tag counted. */
    void deliverDirect(String consumerTag, Message message) {
        try {
            if (closing) {
                return;
            }
            long tag = deliveryTags.add(null, 0, 0);
            output.deliver(number, consumerTag, tag, false, message);
            connection.flushLater();
        } finally {
            message.release();
        }
    }

    /** The socket takes more again: credit-paced consumers may have more. */
    void writableAgain() {
        for (ChannelConsumer consumer : consumers.values()) {
            consumer.grant();
        }
    }

    // ---- basic.get ------------------------------------------------------------------------------------------

    private void onGet(BasicMethod.Get get) {
        String queueName = topology.queueName(get.queue(), get);
        ChannelPermits.queue(connection.access(), Permission.READ, queueName, get);
        Queue queue = topology.existingQueue(queueName, get);
        QueueGetter getter = getters.get(queue);
        if (getter == null || getter.deleted()) {
            getter = new QueueGetter(queue, connection.counters());
            getters.put(queue, getter);
        }
        QueueGetter source = getter;
        await(queue.get(getter.subscription(get.noAck())), get, delivery -> {
            if (delivery == null) {
                connection.counters().foundEmpty();
                reply(BasicMethod.GetEmpty.INSTANCE);
                return;
            }
            Message message = counted(delivery);
            try {
                if (closing) {
                    return; // the getter's unsubscribe puts it back
                }
                connection.counters().delivered(true, get.noAck(), !delivery.firstAcquirer());
                long tag = get.noAck() ? deliveryTags.add(null, delivery.tag(), 0)
                    : deliveryTags.add(source, delivery.tag(), System.nanoTime());
                output.content(number, new BasicMethod.GetOk(tag, !delivery.firstAcquirer(), message.exchange(),
                    message.routingKey(), delivery.remaining()), message);
            } finally {
                message.release();
            }
        });
    }

    // ---- closing --------------------------------------------------------------------------------------------

    /**
     * Closes the channel with 406 when its oldest unacknowledged delivery has waited longer than its queue's consumer
     * timeout ({@link ConsumerTimeout#millisFor}): RabbitMQ 4.0's {@code rabbit_channel} on each tick, in its words.
     * Closing the channel gives every unacked delivery back to its queue.
     */
    void checkConsumerTimeout(long now, ConsumerTimeout timeouts, ScopeErrors errors) {
        long oldest = closing ? -1 : deliveryTags.oldest();
        if (oldest < 0) {
            return;
        }
        DeliveryTags.Source source = deliveryTags.source(oldest);
        long timeout = timeouts.millisFor(source.queue());
        if (timeout == ConsumerTimeout.NONE || now - deliveryTags.deliveredAt(oldest)
                <= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(timeout)) { // saturates: a policy may say 10^15
            return;
        }
        String consumerTag = source instanceof ChannelConsumer consumer ? consumer.tag() : "none";
        LOG.log(System.Logger.Level.WARNING, "Consumer ''{0}'' on channel {1} and queue ''{2}'' in vhost ''{3}'' has"
            + " timed out waiting for a consumer acknowledgement of a delivery with delivery tag = {4}. Timeout used:"
            + " {5} ms. This timeout value can be configured, see consumers doc guide to learn more", consumerTag,
            number, source.queue().name(), vhost.name(), oldest, timeout);
        closeWithError(Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, null, "delivery acknowledgement on channel %d"
            + " timed out. Timeout value used: %d ms. This timeout value can be configured, see consumers doc guide to"
            + " learn more", number, timeout), errors);
    }

    /** Closes the channel with an error: {@code channel.close} goes out, and frames are dropped until close-ok. */
    void closeWithError(Amqp091Exception e, ScopeErrors errors) {
        if (closing) {
            return;
        }
        errors.log(ScopeErrors.Scope.CHANNEL, connection.remote(), "closing channel " + number, e.replyText(),
            e.code() == ReplyCode.INTERNAL_ERROR, e.getCause(), connection.socket().eventLoop());
        output.method(number, new ChannelMethod.Close(e.code().code(), e.replyText(), e.classId(), e.methodId()));
        release();
    }

    /**
     * Lets go of everything: every unacked delivery of the channel goes back to its queue, whether its consumer is
     * still there, was cancelled, or it was a get (RabbitMQ requeues them all too); content drops.
     */
    void release() {
        if (closing) {
            return;
        }
        closing = true;
        connection.channelReleased();
        ChannelRelease release = new ChannelRelease();
        for (ChannelConsumer consumer : consumers.values()) {
            consumer.leave(release);
        }
        for (ChannelConsumer consumer : cancelled) {
            consumer.leave(release);
        }
        for (QueueGetter getter : getters.values()) {
            getter.leave(release);
        }
        release.run();
        connection.counters().consumers(-consumers.size());
        consumers.clear();
        cancelled.clear();
        getters.clear();
        connection.directReplyTo().remove(replyAddress);
        publishing.close();
        content.release();
    }
}
