package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * RabbitMQ's direct reply-to: a client consumes, no-ack, from the pseudo-queue {@value #QUEUE} and publishes
 * requests with that as their {@code reply-to}; the broker rewrites it to an address of that channel's own
 * ({@code amq.rabbitmq.reply-to.<random>}), and a reply published to the default exchange with the address as its
 * routing key goes straight to the channel, past every queue. No queue is declared, nothing is stored.
 *
 * <p>One per listener, shared by its connections: the addresses, by address, in a concurrent map. A reply is
 * handed to the requester's event loop; everything else runs on the calling channel's.
 */
public final class DirectReplyTo {
    static final String QUEUE = "amq.rabbitmq.reply-to";
    static final String PREFIX = QUEUE + ".";

    private record Target(Amqp091Channel channel, String consumerTag) {
    }

    private final Map<String, Target> targets = new ConcurrentHashMap<>();

    /** {@code basic.consume} from {@value #QUEUE}: the channel gets its reply address. */
    void consume(Amqp091Channel channel, BasicMethod.Consume consume) {
        if (!consume.noAck()) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, consume, "reply consumer cannot acknowledge");
        }
        if (channel.replyAddress() != null) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, consume, "reply consumer already set");
        }
        String tag = consume.consumerTag().isEmpty() ? Amqp091Channel.generateTag() : consume.consumerTag();
        if (channel.hasConsumer(tag)) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, consume, "attempt to reuse consumer tag '%s'", tag);
        }
        String address = io.skiffmq.core.queue.QueueDeclaration.generateName(PREFIX);
        targets.put(address, new Target(channel, tag));
        channel.replyConsumer(tag, address);
        if (!consume.noWait()) {
            channel.reply(new BasicMethod.ConsumeOk(tag));
        }
    }

    /** True for a reply address in use (a passive declare of it succeeds, as in RabbitMQ). */
    boolean exists(String address) {
        return targets.containsKey(address);
    }

    /** The channel's reply consumer went (cancel, close). */
    void remove(String address) {
        if (address != null) {
            targets.remove(address);
        }
    }

    /**
     * A message published to the default exchange with a reply address as its routing key goes to that channel.
     * Takes over the caller's reference either way.
     *
     * @return false when no channel has the address (the message is unroutable)
     */
    boolean deliver(Message message) {
        Target target = targets.get(message.routingKey());
        if (target == null) {
            message.release();
            return false;
        }
        target.channel.executor().execute(() -> target.channel.deliverDirect(target.consumerTag, message));
        return true;
    }

    /**
     * The message with its {@code reply-to} rewritten to {@code address} (the only time a 0-9-1 message's
     * properties are encoded again). Takes over the caller's reference.
     */
    static Amqp091Message withReplyTo(Amqp091Message message, String address) {
        BasicProperties p = message.properties();
        BasicProperties rewritten = new BasicProperties(p.contentType(), p.contentEncoding(), p.headers(),
            p.deliveryMode(), p.priority(), p.correlationId(), address, p.expiration(), p.messageId(), p.timestamp(),
            p.type(), p.userId(), p.appId(), p.clusterId());
        ByteBuf properties = message.propertyBytes().alloc().buffer();
        ByteBuf body = message.body().retain();
        try {
            rewritten.encode(properties);
            return Amqp091Message.of(properties, body, message.exchange(), message.routingKey());
        } catch (Amqp091DecodeException | RuntimeException e) {
            properties.release();
            body.release();
            throw new IllegalStateException("re-encoding properties failed", e);
        } finally {
            message.release();
        }
    }
}
