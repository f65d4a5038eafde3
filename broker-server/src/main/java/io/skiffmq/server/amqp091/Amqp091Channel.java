package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.ChannelMethod;
import io.skiffmq.codec.amqp091.ConfirmMethod;
import io.skiffmq.codec.amqp091.ContentHeader;
import io.skiffmq.codec.amqp091.ExchangeMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.MethodCodec;
import io.skiffmq.codec.amqp091.QueueMethod;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.codec.amqp091.TxMethod;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An AMQP 0-9-1 channel: its methods, publishing (a method, a content header, body frames) with confirms or
 * transactions, consumers and {@code basic.get}, and acks by delivery tag. Exchange and queue methods are
 * {@link TopologyMethods}'. Errors are thrown as {@link Amqp091Exception}; the connection closes this channel for
 * a soft one and itself for a hard one.
 *
 * <p>States: open, then closing once we sent {@code channel.close} (every frame but {@code close-ok} and
 * {@code close} is then dropped), then gone. Owned by the connection's event loop, as are its consumers.
 */
final class Amqp091Channel implements Publisher.Confirms, PublisherConfirms.Acks {
    private static final System.Logger LOG = System.getLogger(Amqp091Channel.class.getName());
    private static final int CONTENT_CLASS = BasicMethod.CLASS_ID;

    private final Amqp091ConnectionHandler connection;
    private final int number;
    private final VirtualHost vhost;
    private final FrameOutput output;
    private final TopologyMethods topology;
    private final DeliveryTags deliveryTags = new DeliveryTags();
    private final Map<String, ChannelConsumer> consumers = new LinkedHashMap<>();
    /** {@code basic.get} subscriptions, by queue, for acked and no-ack gets. */
    private final Map<Queue, QueueGetter> getters = new HashMap<>();
    private boolean closing;
    private int prefetch;
    /** The channel-wide prefetch ({@code basic.qos global}), or null. */
    private PrefetchLimit channelLimit;
    private Publisher publisher;
    private PublisherConfirms confirms;
    private ChannelTransaction transaction;
    private String lastDeclaredQueue = "";
    /** Direct reply-to: the consumer tag and the channel's reply address, or null. */
    private String replyConsumerTag;
    private String replyAddress;

    // the content being received: a basic.publish, its header, then its body frames
    private BasicMethod.Publish publishing;
    private ByteBuf contentProperties;
    private long contentSize = -1;
    private ByteBuf contentBody;

    Amqp091Channel(Amqp091ConnectionHandler connection, int number, VirtualHost vhost) {
        this.connection = connection;
        this.number = number;
        this.vhost = vhost;
        this.output = connection.output();
        this.topology = new TopologyMethods(this, vhost);
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
    <T> void await(java.util.concurrent.CompletableFuture<T> future, Method cause, java.util.function.Consumer<T> then) {
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
                if (publishing != null) {
                    throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing, contentSize < 0
                        ? "expected content header for class %d, got non content header frame instead"
                        : "expected content body for class %d, got non content body frame instead", CONTENT_CLASS);
                }
                onMethod(MethodCodec.decode(frame.payload()));
            }
            case Amqp091Frame.TYPE_HEADER -> onContentHeader(frame.payload());
            case Amqp091Frame.TYPE_BODY -> onContentBody(frame.payload());
            default -> throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null, "frame type %d on channel %d",
                frame.type(), number);
        }
    }

    private void onMethod(Method method) {
        if (method instanceof BasicMethod.Publish publish) {
            onPublish(publish);
        } else if (method instanceof BasicMethod.Ack ack) {
            settle(ack.deliveryTag(), ack.multiple(), Outcome.ACCEPTED, ack);
        } else if (method instanceof BasicMethod basic) {
            onBasic(basic);
        } else if (method instanceof QueueMethod || method instanceof ExchangeMethod) {
            topology.onMethod(method);
        } else if (method instanceof ChannelMethod channel) {
            onChannelMethod(channel);
        } else if (method instanceof ConfirmMethod.Select select) {
            onConfirmSelect(select);
        } else if (method instanceof TxMethod tx) {
            onTx(tx);
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

    private void onBasic(BasicMethod method) {
        if (method instanceof BasicMethod.Nack nack) {
            settle(nack.deliveryTag(), nack.multiple(), nack.requeue() ? Outcome.RELEASED : Outcome.REJECTED, nack);
        } else if (method instanceof BasicMethod.Reject reject) {
            settle(reject.deliveryTag(), false, reject.requeue() ? Outcome.RELEASED : Outcome.REJECTED, reject);
        } else if (method instanceof BasicMethod.Get get) {
            onGet(get);
        } else if (method instanceof BasicMethod.Consume consume) {
            onConsume(consume);
        } else if (method instanceof BasicMethod.Cancel cancel) {
            ChannelConsumer consumer = consumers.remove(cancel.consumerTag());
            if (consumer != null) {
                consumer.cancel();
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

    // ---- publishing -----------------------------------------------------------------------------------------

    private void onPublish(BasicMethod.Publish publish) {
        if (publish.immediate()) {
            // RabbitMQ dropped immediate in 3.0
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, publish, "immediate=true");
        }
        publishing = publish;
        contentSize = -1;
    }

    private void onContentHeader(ByteBuf payload) throws Amqp091DecodeException {
        if (publishing == null) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null,
                "expected method frame, got non method frame instead");
        }
        if (contentSize >= 0) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "expected content body for class %d, got non content body frame instead", CONTENT_CLASS);
        }
        ContentHeader header = ContentHeader.decode(payload);
        if (header.classId() != CONTENT_CLASS) {
            header.release();
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "content header for class %d, expected %d", header.classId(), CONTENT_CLASS);
        }
        long max = connection.config().maxMessageSize();
        if (header.bodySize() > max) {
            header.release();
            BasicMethod.Publish refused = publishing;
            publishing = null;
            // the body frames that follow are dropped with everything else once the channel is closing
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, refused,
                "message size %d is larger than configured max size %d", header.bodySize(), max);
        }
        contentProperties = header.properties(); // the header's reference, taken over
        contentSize = header.bodySize();
        if (contentSize == 0) {
            contentBody = payload.alloc().buffer(0, 0);
            contentComplete();
        }
    }

    private void onContentBody(ByteBuf payload) {
        if (publishing == null) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, null,
                "expected method frame, got non method frame instead");
        }
        if (contentSize < 0) {
            throw Amqp091Exception.of(ReplyCode.UNEXPECTED_FRAME, publishing,
                "expected content header for class %d, got non content header frame instead", CONTENT_CLASS);
        }
        long received = contentBody == null ? 0 : contentBody.readableBytes();
        if (received + payload.readableBytes() > contentSize) {
            throw Amqp091Exception.of(ReplyCode.FRAME_ERROR, publishing,
                "content body frame exceeds remaining content size");
        }
        if (contentBody == null) {
            contentBody = payload.retain();
        } else {
            CompositeByteBuf composite;
            if (contentBody instanceof CompositeByteBuf c) {
                composite = c;
            } else {
                composite = payload.alloc().compositeBuffer(Integer.MAX_VALUE).addComponent(true, contentBody);
                contentBody = composite;
            }
            composite.addComponent(true, payload.retain());
        }
        if (contentBody.readableBytes() == contentSize) {
            contentComplete();
        }
    }

    private void contentComplete() {
        BasicMethod.Publish publish = publishing;
        ByteBuf properties = contentProperties;
        ByteBuf body = contentBody;
        publishing = null;
        contentProperties = null;
        contentBody = null;
        contentSize = -1;
        Amqp091Message message;
        try {
            message = Amqp091Message.of(properties, body, publish.exchange(), publish.routingKey());
        } catch (Amqp091DecodeException e) {
            properties.release();
            body.release();
            throw Amqp091Exception.of(e.replyCode(), publish, "content header properties: %s", e.getMessage());
        }
        if (message.invalidExpiration() != null) {
            message.release();
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish, "invalid expiration '%s'",
                message.invalidExpiration());
        }
        if (message.userId() != null && !message.userId().equals(connection.user())) {
            String userId = message.userId();
            message.release();
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish,
                "user_id property set to '%s' but authenticated user was '%s'", userId, connection.user());
        }
        if (DirectReplyTo.QUEUE.equals(message.replyTo())) {
            if (replyAddress == null) {
                message.release();
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish, "fast reply consumer does not exist");
            }
            message = DirectReplyTo.withReplyTo(message, replyAddress);
        }
        if (transaction != null) {
            transaction.publish(message, publish.mandatory());
            return;
        }
        publish(message, publish.mandatory(), confirms == null ? -1 : confirms.next(), publish);
    }

    /**
     * Routes a message; a mandatory one that goes nowhere comes back as {@code basic.return}. In confirm mode, one
     * that no queue will confirm (it went nowhere, or straight to a direct reply-to consumer) is confirmed at once,
     * as RabbitMQ does.
     *
     * @return true when queues took it, and so a confirm for {@code confirmTag} will come
     */
    boolean publish(Message message, boolean mandatory, long confirmTag, Method cause) {
        if (mandatory) {
            message.retain(); // kept for the return
        }
        Publisher.Routed routed;
        boolean direct = message.exchange().isEmpty() && message.routingKey().startsWith(DirectReplyTo.PREFIX);
        try {
            if (direct) {
                routed = connection.directReplyTo().deliver(message) ? Publisher.Routed.ROUTED
                    : Publisher.Routed.UNROUTED;
            } else {
                routed = publisher().publish(message, confirmTag);
            }
        } catch (BrokerException e) {
            if (mandatory) {
                message.release();
            }
            throw switch (e.kind()) {
                case NOT_FOUND -> Amqp091Exception.of(ReplyCode.NOT_FOUND, cause, "no exchange '%s' in vhost '%s'",
                    message.exchange(), vhost.name());
                case ACCESS_REFUSED -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, cause,
                    "cannot publish to internal exchange '%s' in vhost '%s'", message.exchange(), vhost.name());
                default -> Amqp091Exception.of(e, cause);
            };
        } catch (IllegalArgumentException e) {
            if (mandatory) {
                message.release();
            }
            throw Amqp091Exception.of(ReplyCode.SYNTAX_ERROR, cause, "%s", e.getMessage());
        }
        if (routed == Publisher.Routed.UNROUTED && mandatory) {
            output.content(number, new BasicMethod.Return(ReplyCode.NO_ROUTE.code(), ReplyCode.NO_ROUTE.text(),
                message.exchange(), message.routingKey()), message.toAmqp091());
        }
        if (mandatory) {
            message.release();
        }
        boolean confirmWillCome = routed == Publisher.Routed.ROUTED && !direct;
        if (!confirmWillCome && confirmTag >= 0 && confirms != null) {
            confirms.confirmed(confirmTag, confirmTag);
            confirms.flush(this);
        }
        return confirmWillCome;
    }

    private Publisher publisher() {
        if (publisher == null) {
            publisher = new Publisher(vhost, connection.executor(), this);
        }
        return publisher;
    }

    /** From the publisher: confirm mode's numbers, or a transaction's. */
    @Override
    public void confirmed(long firstTag, long lastTag) {
        if (confirms != null) {
            confirms.confirmed(firstTag, lastTag);
        } else if (transaction != null) {
            transaction.confirmed(firstTag, lastTag);
        }
    }

    @Override
    public void rejected(long firstTag, long lastTag) {
        if (confirms != null) {
            confirms.refused(firstTag, lastTag);
        } else if (transaction != null) {
            transaction.confirmed(firstTag, lastTag); // the commit is over for them too
        }
    }

    @Override
    public void batchEnd() {
        if (closing) {
            return;
        }
        if (confirms != null) {
            confirms.flush(this);
            connection.flushLater();
        } else if (transaction != null && transaction.committed()) {
            transaction.commitDone();
            reply(TxMethod.CommitOk.INSTANCE);
            connection.flushLater();
            connection.resume();
        }
    }

    @Override
    public void ack(long tag, boolean multiple) {
        output.method(number, new BasicMethod.Ack(tag, multiple));
    }

    @Override
    public void nack(long tag, boolean multiple) {
        output.method(number, new BasicMethod.Nack(tag, multiple, false));
    }

    private void onConfirmSelect(ConfirmMethod.Select select) {
        if (transaction != null) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, select, "cannot switch from tx to confirm mode");
        }
        if (confirms == null) {
            confirms = new PublisherConfirms();
        }
        if (!select.noWait()) {
            reply(ConfirmMethod.SelectOk.INSTANCE);
        }
    }

    // ---- transactions ---------------------------------------------------------------------------------------

    private void onTx(TxMethod method) {
        if (method instanceof TxMethod.Select) {
            if (confirms != null) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, method,
                    "cannot switch from confirm to tx mode");
            }
            if (transaction == null) {
                transaction = new ChannelTransaction();
            }
            reply(TxMethod.SelectOk.INSTANCE);
            return;
        }
        if (transaction == null) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, method, "channel is not transactional");
        }
        if (method instanceof TxMethod.Commit) {
            commit(method);
        } else if (method instanceof TxMethod.Rollback) {
            transaction.rollback();
            reply(TxMethod.RollbackOk.INSTANCE);
        } else {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "unexpected %s", method.name());
        }
    }

    /**
     * Publishes what the transaction holds, then settles its acks; {@code commit-ok} goes once every published
     * message is as safe as a confirm would say (durable ones synced). Frames after the commit wait until then.
     */
    private void commit(Method cause) {
        ChannelTransaction tx = transaction;
        tx.commit((message, mandatory) -> publish(message, mandatory, tx.nextTag(), cause),
            settle -> settleNow(settle.tag(), settle.multiple(), settle.outcome(), cause));
        if (tx.committed()) {
            tx.commitDone();
            reply(TxMethod.CommitOk.INSTANCE);
        } else {
            connection.suspend(); // until the publisher confirms the rest (batchEnd)
        }
    }

    // ---- acks -----------------------------------------------------------------------------------------------

    private void settle(long tag, boolean multiple, Outcome outcome, Method cause) {
        if (transaction != null) {
            if (!(multiple && tag == 0) && !deliveryTags.isOutstanding(tag)) {
                throw unknownTag(tag, cause);
            }
            transaction.settle(tag, multiple, outcome);
            return;
        }
        settleNow(tag, multiple, outcome, cause);
    }

    private void settleNow(long tag, boolean multiple, Outcome outcome, Method cause) {
        try {
            deliveryTags.settle(tag, multiple, outcome);
        } catch (DeliveryTags.UnknownTagException e) {
            throw unknownTag(tag, cause);
        }
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
        if (qos.global()) {
            // RabbitMQ reads global as "shared by the channel's consumers"; the spec said "the connection's"
            if (channelLimit == null) {
                channelLimit = new PrefetchLimit(qos.prefetchCount());
            } else {
                channelLimit.limit(qos.prefetchCount());
            }
        } else {
            prefetch = qos.prefetchCount();
        }
        reply(BasicMethod.QosOk.INSTANCE);
    }

    private void onConsume(BasicMethod.Consume consume) {
        String queueName = topology.queueName(consume.queue(), consume);
        if (DirectReplyTo.QUEUE.equals(queueName)) {
            connection.directReplyTo().consume(this, consume);
            return;
        }
        Queue queue = topology.existingQueue(queueName, consume);
        String tag = consume.consumerTag().isEmpty() ? generateTag() : consume.consumerTag();
        if (hasConsumer(tag)) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, consume, "attempt to reuse consumer tag '%s'", tag);
        }
        boolean limited = prefetch > 0 || channelLimit != null && channelLimit.limit() > 0;
        ConsumerFlow flow = consume.noAck() || !limited ? ConsumerFlow.credit()
            : ConsumerFlow.prefetch(prefetch, channelLimit);
        ChannelConsumer consumer = new ChannelConsumer(this, tag, queue, consume.noAck(), flow,
            consume.noWait());
        int priority = consumerPriority(consume);
        consumers.put(tag, consumer);
        consumer.subscribe(flow, consume.exclusive(), priority);
        connection.suspend(); // until the queue answers: consume-ok goes before any delivery
    }

    /** The {@code x-priority} argument (RabbitMQ's consumer priorities), 0 without one. */
    private static int consumerPriority(BasicMethod.Consume consume) {
        Object priority = consume.arguments().get("x-priority");
        if (priority == null) {
            return 0;
        }
        if (priority instanceof Number n && (n instanceof Integer || n instanceof Long || n instanceof Short
                || n instanceof Byte) && n.longValue() == n.intValue()) {
            return n.intValue();
        }
        throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, consume,
            "invalid arg 'x-priority' for consumer: an integer is required, got '%s'", priority);
    }

    static String generateTag() {
        return "amq.ctag-" + io.skiffmq.core.queue.QueueDeclaration.generateName().substring("amq.gen-".length());
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

    void consumeAccepted(ChannelConsumer consumer) {
        if (!consumer.noWait()) {
            reply(new BasicMethod.ConsumeOk(consumer.tag()));
        }
        connection.resume();
    }

    void consumeRefused(ChannelConsumer consumer, String reason) {
        consumers.remove(consumer.tag());
        connection.resume();
        // RabbitMQ's text, whichever of the two rules refused it
        connection.channelError(this, Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, new BasicMethod.Consume(
            consumer.queue().name(), consumer.tag(), false, consumer.noAck(), false, false, Map.of()),
            "queue '%s' in vhost '%s' in exclusive use", consumer.queue().name(), vhost.name()));
    }

    /** The consumer's queue was deleted: the client hears of it by a {@code basic.cancel} when it asked to. */
    void consumerQueueDeleted(ChannelConsumer consumer) {
        consumers.remove(consumer.tag());
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
        Message message = delivery.message();
        try {
            long tag = deliveryTags.add(consumer.noAck() ? null : consumer, delivery.tag());
            output.content(number, new BasicMethod.Deliver(consumer.tag(), tag, !delivery.firstAcquirer(),
                message.exchange(), message.routingKey()), message.toAmqp091());
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
            long tag = deliveryTags.add(null, 0);
            output.content(number, new BasicMethod.Deliver(consumerTag, tag, false, message.exchange(),
                message.routingKey()), message.toAmqp091());
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
        Queue queue = topology.existingQueue(topology.queueName(get.queue(), get), get);
        QueueGetter getter = getters.get(queue);
        if (getter == null || getter.deleted()) {
            getter = new QueueGetter(queue);
            getters.put(queue, getter);
        }
        QueueGetter source = getter;
        await(queue.get(getter.subscription(get.noAck())), get, delivery -> {
            if (delivery == null) {
                reply(BasicMethod.GetEmpty.INSTANCE);
                return;
            }
            Message message = delivery.message();
            try {
                if (closing) {
                    return; // the getter's unsubscribe puts it back
                }
                long tag = deliveryTags.add(get.noAck() ? null : source, delivery.tag());
                output.content(number, new BasicMethod.GetOk(tag, !delivery.firstAcquirer(), message.exchange(),
                    message.routingKey(), delivery.remaining()), message.toAmqp091());
            } finally {
                message.release();
            }
        });
    }

    // ---- closing --------------------------------------------------------------------------------------------

    /** Closes the channel with an error: {@code channel.close} goes out, and frames are dropped until close-ok. */
    void closeWithError(Amqp091Exception e) {
        if (closing) {
            return;
        }
        LOG.log(System.Logger.Level.INFO, "closing channel {0} of {1}: {2}", number, connection.remote(),
            e.replyText());
        output.method(number, new ChannelMethod.Close(e.code().code(), e.replyText(), e.classId(), e.methodId()));
        release();
    }

    /** Lets go of everything: consumers and gets unsubscribe (their unacked deliveries go back), content drops. */
    void release() {
        if (closing) {
            return;
        }
        closing = true;
        for (ChannelConsumer consumer : consumers.values()) {
            consumer.close();
        }
        consumers.clear();
        for (QueueGetter getter : getters.values()) {
            getter.close();
        }
        getters.clear();
        connection.directReplyTo().remove(replyAddress);
        if (publisher != null) {
            publisher.close();
        }
        if (transaction != null) {
            transaction.rollback();
        }
        if (contentProperties != null) {
            contentProperties.release();
            contentProperties = null;
        }
        if (contentBody != null) {
            contentBody.release();
            contentBody = null;
        }
        publishing = null;
    }
}
