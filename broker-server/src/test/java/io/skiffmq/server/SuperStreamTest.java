package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.stream.impl.Client;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.stream.SuperStreamException;
import io.skiffmq.core.stream.SuperStreams;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Super streams as RabbitMQ models them: an exchange with {@code x-super-stream}, bound to its partition streams with
 * {@code x-stream-partition-order}. Declared by hand over 0-9-1, through the HTTP API's
 * {@code /api/stream/super-streams} (RabbitMQ's stream management plugin) and {@code skiffmqctl add_super_stream}
 * ({@code rabbitmq-streams}'); their partitions and routes read from the exchange's bindings ({@link SuperStreams}).
 */
@ExtendWith(LeakDetection.class)
class SuperStreamTest {
    private static RunningBroker broker;
    private static HttpApiClient http;
    private static Connection amqp091;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("max-super-stream-partitions=5");
        http = HttpApiClient.guest(broker);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        amqp091 = factory.newConnection();
    }

    @AfterAll
    static void stop() throws Exception {
        amqp091.close();
        broker.close();
    }

    private static VirtualHost vhost() {
        return broker.vhost("/");
    }

    private static String path(String name) {
        return "/api/stream/super-streams/%2F/" + name;
    }

    @Test
    void aSuperStreamDeclaredOver091HasItsPartitionsInOrderAndRoutesByItsExchange() throws Exception {
        String name = unique("invoices");
        Channel channel = amqp091.createChannel();
        channel.exchangeDeclare(name, "direct", true, false, Map.of("x-super-stream", true));
        Map<String, Object> stream = Map.of("x-queue-type", "stream");
        for (int i = 0; i < 3; i++) {
            channel.queueDeclare(name + "-" + i, true, false, false, stream);
        }
        channel.queueDeclare(name + "-classic", true, false, false, Map.of());
        // bound out of order; one order given as a string of digits, as RabbitMQ also reads it
        channel.queueBind(name + "-2", name, "c", Map.of("x-stream-partition-order", 2));
        channel.queueBind(name + "-0", name, "a", Map.of("x-stream-partition-order", 0L));
        channel.queueBind(name + "-classic", name, "b", Map.of("x-stream-partition-order", -1));
        channel.queueBind(name + "-1", name, "b", Map.of("x-stream-partition-order", "1"));

        assertThat(SuperStreams.partitions(vhost(), name)).as("the streams bound, by order; not the classic queue")
            .containsExactly(name + "-0", name + "-1", name + "-2");
        assertThat(SuperStreams.route(vhost(), name, "b")).containsExactly(name + "-1");
        assertThat(SuperStreams.route(vhost(), name, "nowhere")).isEmpty();
        assertThatThrownBy(() -> SuperStreams.partitions(vhost(), "no-such-super-stream"))
            .isInstanceOfSatisfying(SuperStreamException.class,
                e -> assertThat(e.reason()).isEqualTo(SuperStreamException.Reason.STREAM_NOT_FOUND));

        // a publish goes where the exchange routes it
        channel.confirmSelect();
        channel.basicPublish(name, "c", null, "to c".getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(Amqp091Support.TIMEOUT.toMillis());
        Queue partition = vhost().queue(name + "-2");
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> partition.readyCount() == 1);
        assertThat(vhost().queue(name + "-0").readyCount()).isZero();

        SuperStreams.delete(vhost(), name);
        assertThat(vhost().exchange(name)).isNull();
        assertThat(vhost().queue(name + "-0")).isNull();
        assertThat(vhost().queue(name + "-classic")).as("only the streams are partitions").isNotNull();
        channel.queueDelete(name + "-classic");
        channel.close();
    }

    @Test
    void theHttpApiDeclaresASuperStreamAsRabbitMqsStreamPluginDoesAndDeletesIt() throws Exception {
        String name = unique("orders");
        assertThat(http.put(path(name), Map.of("partitions", 3, "arguments", Map.of("max-age", "1D",
            "max-length-bytes", "1000000"))).status()).isEqualTo(204);
        Exchange exchange = vhost().exchange(name);
        assertThat(exchange.type()).isEqualTo(Exchange.Type.DIRECT);
        assertThat(exchange.durable()).isTrue();
        assertThat(exchange.arguments()).containsEntry("x-super-stream", true);
        assertThat(SuperStreams.partitions(vhost(), name)).containsExactly(name + "-0", name + "-1", name + "-2");
        List<Binding> bindings = vhost().bindings().bindingsFrom(name);
        assertThat(bindings).extracting(Binding::key).containsExactlyInAnyOrder("0", "1", "2");
        for (Binding binding : bindings) {
            assertThat(binding.arguments()).containsEntry("x-stream-partition-order",
                Long.parseLong(binding.key()));
            assertThat(binding.destination().name()).isEqualTo(name + "-" + binding.key());
        }
        assertThat(vhost().queue(name + "-1").arguments()).containsEntry("x-queue-type", "stream")
            .containsEntry("x-max-age", "1D").containsEntry("x-max-length-bytes", 1000000L)
            .containsEntry("x-queue-leader-locator", "balanced");

        HttpApiClient.Answer again = http.put(path(name), Map.of("partitions", 3));
        assertThat(again.status()).isEqualTo(400);
        assertThat(again.map()).containsEntry("reason", "{reference_already_exists,\"there is already an exchange"
            + " named " + name + "\"}");

        assertThat(http.delete(path(name)).status()).isEqualTo(204);
        assertThat(vhost().exchange(name)).isNull();
        assertThat(vhost().queue(name + "-0")).isNull();
        assertThat(http.delete(path(name)).status()).isEqualTo(404);
    }

    @Test
    void bindingKeysNamePartitionsAndBadRequestsAreRefusedInRabbitMqsWords() throws Exception {
        String name = unique("regions");
        assertThat(http.put(path(name), Map.of("binding-keys", "amer, emea,,apac")).status()).isEqualTo(204);
        assertThat(SuperStreams.partitions(vhost(), name)).containsExactly(name + "-amer", name + "-emea",
            name + "-apac");
        assertThat(SuperStreams.route(vhost(), name, "emea")).containsExactly(name + "-emea");
        http.delete(path(name));

        String other = unique("bad");
        assertThat(reason(http.put(path(other), Map.of()))).isEqualTo("Must specify partitions or binding keys");
        assertThat(reason(http.put(path(other), Map.of("partitions", 2, "binding-keys", "a"))))
            .isEqualTo("Specify partitions or binding keys, not both");
        assertThat(reason(http.put(path(other), Map.of("partitions", "two")))).isEqualTo(
            "The partitions must be a number");
        assertThat(reason(http.put(path(other), Map.of("partitions", 0))))
            .isEqualTo("The partition number must be greater than 0");
        assertThat(reason(http.put(path(other), Map.of("partitions", 6))))
            .as("max-super-stream-partitions=5").isEqualTo("The partition number must not exceed 5");
        assertThat(reason(http.put(path(other), Map.of("binding-keys", " , "))))
            .isEqualTo("The number of binding keys must be greater than 0");

        vhost().declareQueue(other + "-1", true, Map.of());
        assertThat(reason(http.put(path(other), Map.of("partitions", 2))))
            .isEqualTo("{reference_already_exists,\"there is already a queue named " + other + "-1\"}");
        assertThat(vhost().exchange(other)).isNull();
        vhost().deleteQueue(other + "-1");

        // a stream refused half-way: what was made is deleted again
        assertThat(reason(http.put(path(other), Map.of("partitions", 2, "arguments", Map.of("max-age", "soon")))))
            .startsWith("{validation_failed,");
        assertThat(vhost().exchange(other)).isNull();
        assertThat(vhost().queue(other + "-0")).isNull();
    }

    @Test
    void aSuperStreamOutlivesARestartWithItsOrder(@TempDir Path dir) throws Exception {
        String[] settings = {"data-dir=" + dir.resolve("data")};
        try (RunningBroker first = RunningBroker.start(settings)) {
            SuperStreams.create(first.vhost("/"), "kept", List.of("kept-b", "kept-a"), List.of("b", "a"), Map.of(),
                SuperStreams.DEFAULT_MAX_PARTITIONS);
        }
        try (RunningBroker second = RunningBroker.start(settings)) {
            assertThat(SuperStreams.partitions(second.vhost("/"), "kept")).containsExactly("kept-b", "kept-a");
            assertThat(SuperStreams.route(second.vhost("/"), "kept", "a")).containsExactly("kept-a");
            assertThat(second.vhost("/").exchange("kept").arguments()).containsEntry("x-super-stream", true);
        }
    }

    @Test
    void theStreamProtocolCreatesSuperStreamsWithinMaxSuperStreamPartitions() throws Exception {
        String name = unique("protocol");
        Client client = new Client(new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
        try {
            assertThat(StreamClients.createSuperStream(client, name, SuperStreams.partitionNames(name, 6),
                SuperStreams.routingKeys(6))).as("max-super-stream-partitions=5: validation_failed").isEqualTo(
                (short) 0x11);
            assertThat(vhost().exchange(name)).isNull();
            assertThat(StreamClients.createSuperStream(client, name, SuperStreams.partitionNames(name, 5),
                SuperStreams.routingKeys(5))).isEqualTo((short) 0x01);
            assertThat(client.partitions(name)).isEqualTo(SuperStreams.partitionNames(name, 5));
            assertThat(client.route("3", name)).containsExactly(name + "-3");
            try (com.rabbitmq.stream.Environment environment = StreamClients.environment(broker)) {
                environment.deleteSuperStream(name);
            }
            assertThat(vhost().queue(name + "-0")).isNull();
        } finally {
            client.close();
        }
    }

    @Test
    void aSuperStreamThatWouldPassTheVirtualHostsQueueLimitIsRefusedBeforeAnythingIsMade() throws Exception {
        String name = unique("limited");
        long limit = vhost().queues().size() + 2;
        vhost().maxQueues(limit);
        try {
            // rabbit_stream_manager:validate_super_stream_creation/4, with ~tp's Erlang binaries
            assertThat(reason(http.put(path(name), Map.of("partitions", 3)))).isEqualTo("{validation_failed,"
                + "\"Cannot declare super stream <<\\\"" + name + "\\\">> with 3 partition(s) because queue limit "
                + limit + " in vhost '<<\\\"/\\\">>' is reached\"}");
            assertThat(vhost().exchange(name)).as("nothing made").isNull();
            assertThat(vhost().queue(name + "-0")).isNull();
            assertThat(http.put(path(name), Map.of("partitions", 2)).status()).isEqualTo(204);
            http.delete(path(name));
        } finally {
            vhost().maxQueues(-1);
        }
    }

    private static String reason(HttpApiClient.Answer answer) {
        assertThat(answer.status()).isEqualTo(400);
        return (String) answer.map().get("reason");
    }

    @Test
    void theCallerNeedsThePermissionsRabbitMqAsksFor() throws Exception {
        broker.admin().putUser("ss-user", "pw", List.of("management"));
        broker.admin().setPermissions("ss-user", "/", "^ss-.*", "^ss-.*", "^ss-.*");
        HttpApiClient limited = new HttpApiClient(broker.managementPort(), "ss-user", "pw");
        assertThat(limited.put(path("other"), Map.of("partitions", 1)).status()).isEqualTo(401);
        assertThat(vhost().exchange("other")).isNull();
        assertThat(limited.put(path("ss-mine"), Map.of("partitions", 1)).status()).isEqualTo(204);
        assertThat(limited.delete(path("ss-mine")).status()).isEqualTo(204);
        broker.admin().deleteUser("ss-user");
    }

    @Test
    void skiffmqctlAddsAndDeletesSuperStreamsAsRabbitmqStreamsDoes() throws Exception {
        String name = unique("ctl");
        SkiffmqCtlTest.Result added = SkiffmqCtlTest.ctl(broker.managementPort(), "add_super_stream", name,
            "--partitions", "2", "--max-age", "PT1H30M", "--max-length-bytes", "2mb",
            "--stream-max-segment-size-bytes", "1Mi", "--leader-locator", "client-local");
        assertThat(added.code()).as(added.err()).isZero();
        assertThat(added.lines()).containsExactly("Adding a super stream...", "Super stream " + name
            + " has been created");
        assertThat(SuperStreams.partitions(vhost(), name)).containsExactly(name + "-0", name + "-1");
        assertThat(vhost().queue(name + "-0").arguments()).containsEntry("x-max-age", "5400s")
            .containsEntry("x-max-length-bytes", 2_000_000L)
            .containsEntry("x-stream-max-segment-size-bytes", 1L << 20)
            .containsEntry("x-queue-leader-locator", "client-local");

        SkiffmqCtlTest.Result again = SkiffmqCtlTest.ctl(broker.managementPort(), "add_super_stream", name);
        assertThat(again.code()).isEqualTo(70);
        assertThat(again.err()).contains("there is already an exchange named " + name);

        SkiffmqCtlTest.Result deleted = SkiffmqCtlTest.ctl(broker.managementPort(), "delete_super_stream", name,
            "--quiet");
        assertThat(deleted.code()).as(deleted.err()).isZero();
        assertThat(deleted.lines()).containsExactly("Super stream " + name + " has been deleted");
        assertThat(vhost().exchange(name)).isNull();

        String keyed = unique("ctl-keys");
        SkiffmqCtlTest.Result byKeys = SkiffmqCtlTest.ctl(broker.managementPort(), "add_super_stream", keyed,
            "--routing-keys", "x,y", "-q");
        assertThat(byKeys.code()).as(byKeys.err()).isZero();
        assertThat(SuperStreams.partitions(vhost(), keyed)).containsExactly(keyed + "-x", keyed + "-y");
        SuperStreams.delete(vhost(), keyed);
        SkiffmqCtlTest.Result byDefault = SkiffmqCtlTest.ctl(broker.managementPort(), "add_super_stream", keyed);
        assertThat(byDefault.code()).as(byDefault.err()).isZero();
        assertThat(SuperStreams.partitions(vhost(), keyed)).as("3 partitions by default").hasSize(3);
        SuperStreams.delete(vhost(), keyed);

        for (String[] refused : new String[][] {
            {"--partitions", "2", "--binding-keys", "a,b"}, {"--binding-keys", "a", "--routing-keys", "b"},
            {"--partitions", "0"}, {"--max-age", "1D"}, {"--max-length-bytes", "lots"},
            {"--leader-locator", "anywhere"}, {"--initial-cluster-size", "0"}}) {
            String[] args = new String[refused.length + 2];
            args[0] = "add_super_stream";
            args[1] = name;
            System.arraycopy(refused, 0, args, 2, refused.length);
            SkiffmqCtlTest.Result result = SkiffmqCtlTest.ctl(broker.managementPort(), args);
            assertThat(result.code()).as(String.join(" ", refused)).isEqualTo(64);
        }
        assertThat(SkiffmqCtlTest.ctl(broker.managementPort(), "add_super_stream", name, "--partitions", "0").err())
            .contains("The partition number must be greater than 0");
        assertThat(vhost().exchange(name)).isNull();
        SkiffmqCtlTest.Result missing = SkiffmqCtlTest.ctl(broker.managementPort(), "delete_super_stream", name);
        assertThat(missing.code()).isEqualTo(70);
    }
}
