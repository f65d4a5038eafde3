package io.skiffmq.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Router;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code POST /api/exchanges/{vhost}/{name}/publish}, as RabbitMQ does it: one message, published as a 0-9-1
 * publisher with confirms and {@code mandatory} would publish it; the answer, once every queue it went to confirmed
 * it (durable ones on disk), is {@code {"routed":true}}, or {@code {"routed":false}} when it went nowhere. A queue
 * that refuses it (a length limit with {@code reject-publish}) makes a 400. Write permission on the exchange and
 * topic permissions apply. While a resource alarm is up, nothing is published (503): RabbitMQ's publishing channel
 * would block instead. Stateless.
 */
final class ExchangePublish {
    /** How long an answer waits for the queues' confirms. */
    static final int CONFIRM_WAIT_SECONDS = 30;

    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    ExchangePublish(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    CompletableFuture<ApiResponse> publish(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        Exchange exchange = vhost.exchange(ExchangeResources.name(request.variable("name")));
        if (exchange == null) {
            throw ApiException.notFound();
        }
        Map<String, Object> body = request.json(mapper);
        String routingKey = Bodies.required(body, "routing_key");
        byte[] payload = payload(Bodies.required(body, "payload"), Bodies.required(body, "payload_encoding"));
        if (!(body.get("properties") instanceof Map<?, ?> properties)) {
            throw ApiException.badRequest("properties must be an object");
        }
        String name = exchange.isDefault() ? Access.DEFAULT_EXCHANGE : exchange.name();
        lookups.require(request.caller(), vhost.name(), Permission.WRITE, Access.Resource.EXCHANGE, name);
        Access access = lookups.broker().accessControl().access(request.caller().user(), vhost.name());
        checkTopic(access, exchange, routingKey);
        if (exchange.internal()) {
            throw ApiException.badRequest("cannot publish to internal exchange '" + exchange.name() + "'");
        }
        BasicProperties props = properties(properties);
        String userIdRefusal = props.userId() == null ? null : access.userIdRefusal(props.userId());
        if (userIdRefusal != null) {
            throw ApiException.badRequest(userIdRefusal);
        }
        if (lookups.broker().alarms().any()) {
            throw new ApiException(503, "resource_alarm", "publishing is blocked by a resource alarm");
        }
        return send(vhost, exchange, routingKey, props, payload, access);
    }

    /** Refuses a routing key the caller may not publish with to a topic exchange. */
    private static void checkTopic(Access access, Exchange exchange, String routingKey) {
        String topicRefusal = exchange.type() == Exchange.Type.TOPIC && access.hasTopicPermissions()
            ? access.topicRefusal(Permission.WRITE, exchange.name(), routingKey) : null;
        if (topicRefusal != null) {
            throw ApiException.notAuthorised(topicRefusal);
        }
    }

    private static CompletableFuture<ApiResponse> send(VirtualHost vhost, Exchange exchange, String routingKey,
            BasicProperties props, byte[] payload, Access access) {
        ByteBuf encoded = Unpooled.buffer();
        ByteBuf content = Unpooled.wrappedBuffer(payload);
        Amqp091Message message;
        try {
            props.encode(encoded);
            message = Amqp091Message.of(encoded, content, exchange.name(), routingKey);
        } catch (Amqp091DecodeException | IllegalArgumentException e) {
            encoded.release();
            content.release();
            throw ApiException.badRequest("invalid properties: " + e.getMessage());
        }
        List<Queue> queues;
        try {
            List<String> moreKeys = message.headerRoutes(); // CC and BCC: their keys need the topic permission too
            for (int i = 0; moreKeys != null && i < moreKeys.size(); i++) {
                checkTopic(access, exchange, moreKeys.get(i));
            }
            queues = vhost.route(exchange, routingKey, moreKeys, message, new Router(), new ArrayList<>());
            io.skiffmq.core.filter.SubscriptionFilter.retainAccepting(message, queues, null);
        } catch (RuntimeException e) {
            message.release();
            throw e;
        }
        if (queues.isEmpty()) {
            message.release();
            return CompletableFuture.completedFuture(ApiResponse.ok(Map.of("routed", false)));
        }
        Message delivered = Publisher.withoutBcc(message);
        CompletableFuture<ApiResponse> confirmed = new CompletableFuture<>();
        AtomicInteger waiting = new AtomicInteger(queues.size());
        PublishConfirm confirm = new PublishConfirm() {
            @Override
            public void run() {
                if (waiting.decrementAndGet() == 0) {
                    confirmed.complete(ApiResponse.ok(Map.of("routed", true)));
                }
            }

            @Override
            public void refused() {
                confirmed.completeExceptionally(
                    ApiException.badRequest("Unable to publish message. Check queue limits."));
            }
        };
        for (Queue queue : queues) {
            queue.publish(delivered.retain(), confirm);
        }
        delivered.release();
        return confirmed.orTimeout(CONFIRM_WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private static byte[] payload(String payload, String encoding) {
        return switch (encoding) {
            case "string" -> payload.getBytes(StandardCharsets.UTF_8);
            case "base64" -> {
                try {
                    yield Base64.getDecoder().decode(payload);
                } catch (IllegalArgumentException e) {
                    throw ApiException.badRequest("payload is not base64");
                }
            }
            default -> throw ApiException.badRequest("unsupported payload_encoding '" + encoding + "'");
        };
    }

    /** RabbitMQ's property names, as {@code /get} shows them. */
    @SuppressWarnings("unchecked")
    private static BasicProperties properties(Map<?, ?> p) {
        Object headers = p.get("headers");
        if (headers != null && !(headers instanceof Map<?, ?>)) {
            throw ApiException.badRequest("headers must be an object");
        }
        Object timestamp = p.get("timestamp");
        return new BasicProperties(text(p, "content_type"), text(p, "content_encoding"),
            (Map<String, Object>) headers, number(p, "delivery_mode"), number(p, "priority"),
            text(p, "correlation_id"), text(p, "reply_to"), text(p, "expiration"), text(p, "message_id"),
            timestamp instanceof Number n ? Instant.ofEpochSecond(n.longValue()) : null, text(p, "type"),
            text(p, "user_id"), text(p, "app_id"), text(p, "cluster_id"));
    }

    private static String text(Map<?, ?> p, String name) {
        Object value = p.get(name);
        return value == null ? null : value.toString();
    }

    private static Integer number(Map<?, ?> p, String name) {
        Object value = p.get(name);
        if (value == null) {
            return null;
        }
        try {
            return value instanceof Number n ? n.intValue() : Integer.parseInt(value.toString());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a number");
        }
    }
}
