package io.skiffmq.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /api/queues/{vhost}/{name}/get}: takes up to {@code count} messages through a pull subscription of
 * its own (which counts as no consumer), describes each as RabbitMQ does, and settles them all as {@code ackmode}
 * says: {@code ack_requeue_true} and {@code reject_requeue_true} put them back (redelivered from then on),
 * {@code ack_requeue_false} removes them, {@code reject_requeue_false} rejects them (dead-lettered when the queue
 * has a dead-letter exchange). One per request; the gets run one after another on the queue's thread.
 *
 * @param truncate payloads longer than this many bytes are cut ({@code -1}: never)
 */
record QueuePeek(int count, Outcome settle, boolean base64, int truncate) {

    static QueuePeek of(Map<String, Object> body) {
        String ackmode = Bodies.required(body, "ackmode");
        Outcome settle = switch (ackmode) {
            case "ack_requeue_true", "reject_requeue_true" -> Outcome.RELEASED;
            case "ack_requeue_false" -> Outcome.ACCEPTED;
            case "reject_requeue_false" -> Outcome.REJECTED;
            default -> throw ApiException.badRequest("unknown ackmode '" + ackmode + "'");
        };
        String encoding = Bodies.required(body, "encoding");
        if (!encoding.equals("auto") && !encoding.equals("base64")) {
            throw ApiException.badRequest("encoding must be auto or base64");
        }
        int count = Bodies.integer(body, "count", 1);
        if (count < 1) {
            throw ApiException.badRequest("count must be at least 1");
        }
        return new QueuePeek(count, settle, encoding.equals("base64"), Bodies.integer(body, "truncate", -1));
    }

    CompletableFuture<List<Map<String, Object>>> run(Queue queue) {
        QueueConsumer consumer = queue.subscribe(PullSink.INSTANCE, ConsumerFlow.pull(), false);
        List<Map<String, Object>> got = new ArrayList<>();
        return next(queue, consumer, got).handle((done, failure) -> {
            queue.unsubscribe(consumer, settle);
            if (failure != null) {
                throw failure instanceof RuntimeException r ? r : new IllegalStateException(failure);
            }
            return got;
        });
    }

    private CompletableFuture<Void> next(Queue queue, QueueConsumer consumer, List<Map<String, Object>> got) {
        if (got.size() == count) {
            return CompletableFuture.completedFuture(null);
        }
        return queue.get(consumer).thenCompose(delivery -> {
            if (delivery == null) {
                return CompletableFuture.completedFuture(null);
            }
            try {
                got.add(describe(delivery));
            } finally {
                delivery.message().release();
            }
            return next(queue, consumer, got);
        });
    }

    private Map<String, Object> describe(QueueDelivery delivery) {
        Message message = delivery.message();
        Amqp091Message amqp = message.toAmqp091();
        ByteBuf body = amqp.body();
        byte[] bytes = ByteBufUtil.getBytes(body, body.readerIndex(),
            truncate < 0 ? body.readableBytes() : Math.min(truncate, body.readableBytes()));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("payload_bytes", body.readableBytes());
        m.put("redelivered", !delivery.firstAcquirer());
        m.put("exchange", message.exchange() == null ? "" : message.exchange());
        m.put("routing_key", message.routingKey() == null ? "" : message.routingKey());
        m.put("message_count", delivery.remaining());
        m.put("properties", properties(amqp.properties()));
        String text = base64 ? null : utf8(bytes);
        m.put("payload", text != null ? text : Base64.getEncoder().encodeToString(bytes));
        m.put("payload_encoding", text != null ? "string" : "base64");
        return m;
    }

    /** The bytes as text when they are valid UTF-8 (RabbitMQ's {@code auto}), else null. */
    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static Map<String, Object> properties(BasicProperties p) {
        Map<String, Object> m = new LinkedHashMap<>();
        put(m, "content_type", p.contentType());
        put(m, "content_encoding", p.contentEncoding());
        put(m, "priority", p.priority());
        put(m, "correlation_id", p.correlationId());
        put(m, "reply_to", p.replyTo());
        put(m, "expiration", p.expiration());
        put(m, "message_id", p.messageId());
        put(m, "timestamp", p.timestamp() == null ? null : p.timestamp().getEpochSecond());
        put(m, "type", p.type());
        put(m, "user_id", p.userId());
        put(m, "app_id", p.appId());
        put(m, "cluster_id", p.clusterId());
        put(m, "delivery_mode", p.deliveryMode());
        if (p.headers() != null) {
            m.put("headers", JsonValues.of(p.headers()));
        }
        return m;
    }

    private static void put(Map<String, Object> m, String name, Object value) {
        if (value != null) {
            m.put(name, value);
        }
    }

    /** The sink of a pull subscription: the queue never pushes to it. */
    private enum PullSink implements ConsumerSink {
        INSTANCE;

        @Override
        public void deliver(QueueDelivery delivery) {
            delivery.message().release();
            throw new IllegalStateException("a pull subscription is never pushed to");
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        }

        @Override
        public void queueDeleted() {
        }
    }
}
