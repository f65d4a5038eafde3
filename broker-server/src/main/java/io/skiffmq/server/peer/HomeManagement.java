package io.skiffmq.server.peer;

import io.skiffmq.core.BrokerException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Sender;
import org.apache.qpid.proton.engine.Session;
import org.apache.qpid.proton.message.Message;

/**
 * Requests to the home node's {@code /management} node (RabbitMQ 4's HTTP over AMQP) on a {@link PeerConnection}:
 * a queue's counts ({@code GET /queues/q}), its purge ({@code DELETE /queues/q/messages}), and the counts of all
 * the queues homed there ({@code GET /queues}, which only node connections may ask), answered by the node that
 * holds the messages. One link pair per connection, attached when first needed.
 *
 * <p>Owned by the connection's event loop.
 */
final class HomeManagement {
    /** Responses the home node may send before this side grants more credit. */
    private static final int CREDIT = 100;

    private final Sender requests;
    private final Receiver responses;
    private final ArrayDeque<Message> waiting = new ArrayDeque<>();
    private final Map<Object, CompletableFuture<Object>> pending = new HashMap<>();
    private long nextId;

    HomeManagement(Session session, String name) {
        requests = session.sender(name);
        Target target = new Target();
        target.setAddress("/management");
        requests.setTarget(target);
        requests.setSource(new Source());
        requests.setSenderSettleMode(SenderSettleMode.SETTLED);
        requests.setContext(this);
        responses = session.receiver(name);
        Source source = new Source();
        source.setAddress("/management");
        responses.setSource(source);
        responses.setTarget(new Target());
        responses.setContext(this);
        requests.open();
        responses.open();
        responses.flow(CREDIT);
    }

    /** Sends a request; completes with the response's body (a map, a list), or fails with the home node's refusal. */
    CompletableFuture<Object> request(String method, String path) {
        Message request = Proton.message();
        Properties properties = new Properties();
        Object id = "peer-" + nextId++;
        properties.setMessageId(id);
        properties.setTo(path);
        properties.setSubject(method);
        properties.setReplyTo("$me");
        request.setProperties(properties);
        CompletableFuture<Object> answered = new CompletableFuture<>();
        pending.put(id, answered);
        waiting.add(request);
        send();
        return answered;
    }

    /** Sends what waits, as far as the link's credit goes. */
    void send() {
        while (requests.getCredit() > 0 && !waiting.isEmpty()) {
            Message request = waiting.poll();
            byte[] buffer = new byte[4096]; // a path of a 255-byte name, percent-encoded, fits
            int length = request.encode(buffer, 0, buffer.length);
            Delivery delivery = requests.delivery(new byte[0]);
            requests.send(buffer, 0, length);
            requests.advance();
            delivery.settle();
        }
    }

    void responded(Delivery delivery) {
        byte[] bytes = new byte[delivery.pending()];
        responses.recv(bytes, 0, bytes.length);
        responses.advance();
        delivery.settle();
        if (responses.getCredit() < CREDIT / 2) {
            responses.flow(CREDIT - responses.getCredit());
        }
        Message response = Proton.message();
        response.decode(bytes, 0, bytes.length);
        CompletableFuture<Object> answered = response.getProperties() == null ? null
            : pending.remove(response.getProperties().getCorrelationId());
        if (answered == null) {
            return;
        }
        Object body = response.getBody() instanceof AmqpValue value ? value.getValue() : null;
        String status = response.getProperties().getSubject();
        if ("200".equals(status) && (body instanceof Map<?, ?> || body instanceof java.util.List<?>)) {
            answered.complete(body);
        } else {
            answered.completeExceptionally(new BrokerException(BrokerException.Kind.NOT_FOUND,
                String.valueOf(body)));
        }
    }

    /** The connection or a link went: whatever waits for an answer fails with {@code failure}. */
    void fail(RuntimeException failure) {
        pending.values().forEach(f -> f.completeExceptionally(failure));
        pending.clear();
        waiting.clear();
    }

    /** The number in a response's field, or 0. */
    static long number(Map<?, ?> body, String field) {
        return body.get(field) instanceof Number n ? n.longValue() : 0; // UnsignedLong and UnsignedInteger too
    }
}
