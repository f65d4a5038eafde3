package io.skiffmq.server.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The HTTP-over-AMQP management API by method and path: status codes, percent-encoding, bindings with arguments. */
class ManagementNodeTest {

    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
    private final ManagementNode node = new ManagementNode(vhost, "skiffmq@test");

    private ManagementNode.Response call(String method, String path, Object body) {
        return node.handle(method, path, body).join();
    }

    @Test
    void queuesAreCreatedFoundAndDeletedWithTheRightCodes() {
        assertThat(call("PUT", "/queues/a%2Fb%20c", Map.of("durable", true)).status()).isEqualTo(201);
        assertThat(vhost.queue("a/b c")).as("percent-decoded name").isNotNull();
        assertThat(call("PUT", "/queues/a%2Fb%20c", Map.of("durable", true)).status()).isEqualTo(200);
        ManagementNode.Response info = call("GET", "/queues/a%2Fb%20c", null);
        assertThat(info.status()).isEqualTo(200);
        @SuppressWarnings("unchecked")
        Map<String, Object> body = (Map<String, Object>) info.body();
        assertThat(body).containsEntry("name", "a/b c").containsEntry("type", "classic");
        assertThat(call("GET", "/queues/missing", null).status()).isEqualTo(404);
        assertThat(call("DELETE", "/queues/a%2Fb%20c/messages", null).status()).isEqualTo(200);
        assertThat(call("DELETE", "/queues/a%2Fb%20c", null).status()).isEqualTo(200);
        assertThat(vhost.queue("a/b c")).isNull();
    }

    @Test
    void queueArgumentsOfAClassicQueueAreAcceptedAndKept() {
        Map<String, Object> arguments = Map.ofEntries(Map.entry("x-message-ttl", 1000L),
            Map.entry("x-max-length", 10L), Map.entry("x-max-length-bytes", 4096L),
            Map.entry("x-dead-letter-exchange", "dlx"), Map.entry("x-dead-letter-routing-key", "dead"),
            Map.entry("x-overflow", "reject-publish"), Map.entry("x-max-priority", 5L),
            Map.entry("x-single-active-consumer", true), Map.entry("x-expires", 60000L),
            Map.entry("x-delivery-limit", 3L), Map.entry("x-queue-leader-locator", "balanced"),
            Map.entry("x-queue-type", "classic"));
        assertThat(call("PUT", "/queues/q", Map.of("arguments", arguments)).status()).isEqualTo(201);
        assertThat(vhost.queue("q").arguments()).isEqualTo(arguments);
        assertThat(call("PUT", "/queues/q", Map.of("arguments", arguments)).status()).as("the same again").isEqualTo(200);
        assertThat(call("PUT", "/queues/lazy", Map.of("arguments", Map.of("x-queue-mode", "lazy"))).status())
            .as("accepted and ignored, as RabbitMQ 4's classic queues do").isEqualTo(201);
    }

    @Test
    void invalidQueueArgumentsAre409WithRabbitMqsTextAndCreateNothing() {
        Map<Map<String, Object>, String> refused = Map.of(
            Map.of("x-max-length", -1L), "invalid arg 'x-max-length' for queue 'q' in vhost '/': {value_negative,-1}",
            Map.of("x-expires", 0L), "invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}",
            Map.of("x-overflow", "drop-tail"), "invalid arg 'x-overflow' for queue 'q' in vhost '/': invalid_overflow",
            Map.of("x-dead-letter-routing-key", "k"),
            "invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': routing_key_but_no_dlx_defined",
            Map.of("x-max-age", "1D"),
            "invalid arg 'x-max-age' for queue 'q' in vhost '/' of queue type rabbit_classic_queue",
            Map.of("x-queue-mode", "fast"), "invalid arg 'x-queue-mode' for queue 'q' in vhost '/'");
        refused.forEach((arguments, text) -> {
            ManagementNode.Response response = call("PUT", "/queues/q", Map.of("arguments", arguments));
            assertThat(response.status()).as(arguments.toString()).isEqualTo(409);
            assertThat(response.body().toString()).startsWith(text);
        });
        assertThat(vhost.queue("q")).isNull();
    }

    @Test
    void aRedeclarationWithAnotherArgumentIs409() {
        assertThat(call("PUT", "/queues/q", Map.of("arguments", Map.of("x-max-length", 10L))).status()).isEqualTo(201);
        assertThat(call("PUT", "/queues/q", Map.of("arguments", Map.of("x-max-length", 20L))).status()).isEqualTo(409);
        assertThat(call("PUT", "/queues/q", Map.of()).status()).as("the argument left out").isEqualTo(409);
        assertThat(call("PUT", "/queues/q", Map.of("arguments", Map.of("x-max-length", 10))).status())
            .as("an int and a long of one value are equivalent").isEqualTo(200);
    }

    @Test
    void quorumQueuesAreDeclaredDurableOnlyAndShownAsQuorum() {
        ManagementNode.Response response = call("PUT", "/queues/q",
            Map.of("durable", true, "arguments", Map.of("x-queue-type", "quorum", "x-delivery-limit", 3)));
        assertThat(response.status()).isEqualTo(201);
        assertThat(vhost.queue("q").type().alias()).isEqualTo("quorum");
        @SuppressWarnings("unchecked")
        Map<String, Object> info = (Map<String, Object>) call("GET", "/queues/q", null).body();
        assertThat(info).containsEntry("type", "quorum").containsEntry("leader", "skiffmq@test");
        // rabbit_quorum_queue:declare/2's refusals are 400 here, as rabbit_amqp_management answers them
        ManagementNode.Response nonDurable = call("PUT", "/queues/nd",
            Map.of("durable", false, "arguments", Map.of("x-queue-type", "quorum")));
        assertThat(nonDurable.status()).isEqualTo(400);
        assertThat(nonDurable.body().toString()).contains("invalid property 'non-durable' for queue 'nd' in vhost '/'");
        assertThat(vhost.queue("nd")).isNull();
    }

    @Test
    void argumentsRabbitMqDoesNotKnowAreKeptAndIgnored() {
        assertThat(call("PUT", "/queues/q", Map.of("arguments", Map.of("x-my-tag", "blue"))).status()).isEqualTo(201);
        assertThat(vhost.queue("q").arguments()).containsEntry("x-my-tag", "blue");
    }

    @Test
    void exclusiveAndAutoDeleteQueuesAreReportedAndLockedToTheirConnection() {
        assertThat(call("PUT", "/queues/mine", Map.of("exclusive", true, "auto_delete", true)).status()).isEqualTo(201);
        @SuppressWarnings("unchecked")
        Map<String, Object> info = (Map<String, Object>) call("GET", "/queues/mine", null).body();
        assertThat(info).containsEntry("exclusive", true).containsEntry("auto_delete", true);
        assertThat(call("PUT", "/queues/mine", Map.of("exclusive", true, "auto_delete", true)).status()).isEqualTo(200);
        assertThat(call("PUT", "/queues/mine", Map.of("exclusive", true)).status()).as("declared differently")
            .isEqualTo(409);

        ManagementNode other = new ManagementNode(vhost, "skiffmq@test");
        assertThat(other.handle("PUT", "/queues/mine", Map.of("exclusive", true, "auto_delete", true)).join().status())
            .as("another connection's exclusive queue: resource_locked, which RabbitMQ answers with 400")
            .isEqualTo(400);
        assertThat(other.handle("DELETE", "/queues/mine/messages", null).join().status()).isEqualTo(400);
        assertThat(other.handle("DELETE", "/queues/mine", null).join().status()).isEqualTo(400);
        assertThat(call("DELETE", "/queues/mine", null).status()).isEqualTo(200);
    }

    @Test
    void aBodyFieldRabbitMqDoesNotKnowIsABadRequest() {
        assertThat(call("PUT", "/queues/q", Map.of("durable", true, "lazy", true)).status()).isEqualTo(400);
        assertThat(call("PUT", "/exchanges/e", Map.of("type", "fanout", "alternate", "x")).status()).isEqualTo(400);
        assertThat(call("POST", "/bindings", Map.of("source", "amq.fanout", "destination_queue", "q", "binding_key", "",
            "priority", 1)).status()).isEqualTo(400);
        assertThat(vhost.queue("q")).isNull();
        assertThat(vhost.exchange("e")).isNull();
    }

    @Test
    void queueNamesAreCheckedAsRabbitMqChecksThem() {
        assertThat(call("PUT", "/queues/", Map.of()).status()).isEqualTo(400);
        assertThat(call("PUT", "/queues/amq.mine", Map.of()).status()).isEqualTo(403);
        assertThat(call("PUT", "/queues/a%0Ab", Map.of()).status()).isEqualTo(400);
        assertThat(vhost.queues()).isEmpty();
    }

    @Test
    void exchangesConflictWith409AndReservedNamesAreRefused() {
        assertThat(call("PUT", "/exchanges/e1", Map.of("type", "topic")).status()).isEqualTo(204);
        assertThat(call("PUT", "/exchanges/e1", Map.of("type", "topic")).status()).isEqualTo(204);
        assertThat(call("PUT", "/exchanges/e1", Map.of("type", "fanout")).status()).isEqualTo(409);
        assertThat(call("PUT", "/exchanges/e2", Map.of("type", "nonsense")).status()).isEqualTo(400);
        assertThat(call("DELETE", "/exchanges/amq.topic", null).status()).isEqualTo(403);
        assertThat(call("DELETE", "/exchanges/e1", null).status()).isEqualTo(204);
    }

    @Test
    void bindingsAreListedWithALocationThatDeletesExactlyThatBinding() {
        call("PUT", "/queues/q", null);
        Map<String, Object> withArgs = Map.of("source", "amq.direct", "destination_queue", "q", "binding_key", "k",
            "arguments", Map.of("tag", "one"));
        Map<String, Object> otherArgs = Map.of("source", "amq.direct", "destination_queue", "q", "binding_key", "k",
            "arguments", Map.of("tag", "two"));
        assertThat(call("POST", "/bindings", withArgs).status()).isEqualTo(204);
        assertThat(call("POST", "/bindings", otherArgs).status()).isEqualTo(204);
        assertThat(call("POST", "/bindings", Map.of("source", "amq.direct", "destination_queue", "nope")).status())
            .isEqualTo(404);

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> listed = (List<Map<String, Object>>) call("GET",
            "/bindings?src=amq.direct&dstq=q&key=k", null).body();
        assertThat(listed).hasSize(2);
        String location = listed.stream().filter(b -> ((Map<?, ?>) b.get("arguments")).get("tag").equals("one"))
            .findFirst().orElseThrow().get("location").toString();
        assertThat(call("DELETE", location, null).status()).isEqualTo(204);
        assertThat(vhost.bindings().bindingsFrom("amq.direct")).hasSize(1)
            .allSatisfy(b -> assertThat(b.arguments()).containsEntry("tag", "two"));
        assertThat(call("DELETE", location, null).status()).as("already gone: 204, as RabbitMQ").isEqualTo(204);
        assertThat(vhost.bindings().bindingsFrom("amq.direct")).hasSize(1);
    }

    @Test
    void unknownResourcesAre404() {
        assertThat(call("GET", "/nothing/here", null).status()).isEqualTo(404);
        assertThat(call("PATCH", "/queues/q", null).status()).isEqualTo(405);
    }
}
