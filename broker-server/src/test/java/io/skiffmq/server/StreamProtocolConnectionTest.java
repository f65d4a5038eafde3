package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.stream.AuthenticationFailureException;
import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.impl.Client;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.metrics.BrokerCounters;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A stream protocol connection's handshake and what it may do: the peer properties the client reads its features
 * from, {@code open} advertising the host and port {@code metadata} lists (the setting, or the address the client
 * reached), logins refused, virtual host access, permissions per command with RabbitMQ's codes, the update pushed
 * when a stream in use is deleted, and the HTTP API listing the connection.
 */
@ExtendWith(LeakDetection.class)
class StreamProtocolConnectionTest {
    private static final short OK = 0x01;
    private static final short STREAM_DOES_NOT_EXIST = 0x02;
    private static final short STREAM_ALREADY_EXISTS = 0x05;
    private static final short STREAM_NOT_AVAILABLE = 0x06;
    private static final short ACCESS_REFUSED = 0x10;
    private static final short PRECONDITION_FAILED = 0x11;

    private static Client.ClientParameters parameters(RunningBroker broker) {
        return new Client.ClientParameters().host("127.0.0.1").port(broker.streamPort());
    }

    /** What {@code open} advertised ({@code Client.serverAdvertisedHost/Port} are the client's own, unexported). */
    private static String advertised(Client client) throws Exception {
        Method host = Client.class.getDeclaredMethod("serverAdvertisedHost");
        Method port = Client.class.getDeclaredMethod("serverAdvertisedPort");
        host.setAccessible(true);
        port.setAccessible(true);
        return host.invoke(client) + ":" + port.invoke(client);
    }

    @Test
    void openAdvertisesWhatMetadataListsAndTheFeatureLevelTurnsTheClientsFeaturesOn() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            Client client = new Client(parameters(broker));
            try {
                assertThat(client.brokerVersion()).isEqualTo(broker.broker().config().rabbitmqVersion());
                assertThat(client.filteringSupported()).as("publish v2 offered").isTrue();
                assertThat(client.create("located").isOk()).isTrue();
                Client.StreamMetadata metadata = client.metadata("located").get("located");
                assertThat(metadata.getResponseCode()).isEqualTo(OK);
                assertThat(metadata.getLeader().getHost() + ":" + metadata.getLeader().getPort())
                    .isEqualTo(advertised(client)).isEqualTo("127.0.0.1:" + broker.streamPort());
                assertThat(metadata.getReplicas()).isEmpty();
                assertThat(client.metadata("nowhere").get("nowhere").getResponseCode())
                    .isEqualTo(STREAM_DOES_NOT_EXIST);
                assertThat(client.create("located").getResponseCode()).isEqualTo(STREAM_ALREADY_EXISTS);
                assertThat(client.create("located", Map.of("max-age", "1D")).getResponseCode())
                    .as("again with other arguments").isEqualTo(PRECONDITION_FAILED);
                assertThat(client.create("bad", Map.of("max-age", "soon")).getResponseCode())
                    .isEqualTo(PRECONDITION_FAILED);
                assertThat(client.create("amq.stream").getResponseCode()).isEqualTo(PRECONDITION_FAILED);
                assertThat(client.delete("nowhere").getResponseCode()).isEqualTo(STREAM_DOES_NOT_EXIST);
                assertThat(client.streamStats("located").getInfo()).containsEntry("first_chunk_id", -1L)
                    .containsEntry("committed_chunk_id", -1L);
            } finally {
                client.close();
            }
        }
    }

    @Test
    void anAdvertisedHostIsWhatClientsConnectToAndTheyKeepTheirConnections() throws Exception {
        try (RunningBroker broker = RunningBroker.start("stream-advertised-host=localhost")) {
            Client client = new Client(parameters(broker));
            try {
                assertThat(advertised(client)).isEqualTo("localhost:" + broker.streamPort());
                assertThat(client.create("advertised").isOk()).isTrue();
                Client.Broker leader = client.metadata("advertised").get("advertised").getLeader();
                assertThat(leader.getHost()).isEqualTo("localhost");
            } finally {
                client.close();
            }
            try (Environment environment = StreamClients.environment(broker);
                    Producer producer = environment.producerBuilder().stream("advertised").build()) {
                assertThat(StreamClients.sendAndConfirm(producer, "m", 10)).isEmpty();
                List<String> got = Collections.synchronizedList(new ArrayList<>());
                try (var consumer = environment.consumerBuilder().stream("advertised")
                        .offset(OffsetSpecification.first())
                        .messageHandler((c, m) -> got.add(StreamClients.text(m))).build()) {
                    Amqp091Support.await().atMost(TIMEOUT).until(() -> got.size() == 10);
                }
            }
        }
    }

    @Test
    void loginsAndVirtualHostsAreRefusedAsRabbitMqRefusesThem() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().putUser("nobody", "pw", List.of());
            assertThatThrownBy(() -> new Client(parameters(broker).username("guest").password("wrong")))
                .isInstanceOf(AuthenticationFailureException.class);
            assertThatThrownBy(() -> new Client(parameters(broker).username("nobody").password("pw")))
                .as("no access to /").hasMessageContaining("VIRTUAL_HOST_ACCESS_FAILURE");
            assertThatThrownBy(() -> new Client(parameters(broker).virtualHost("missing")))
                .hasMessageContaining("VIRTUAL_HOST_ACCESS_FAILURE");
        }
    }

    @Test
    void anonymousLogsInAsTheAnonymousUserAndTheVirtualHostsConnectionLimitHoldsAtOpen() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient http = HttpApiClient.guest(broker);
            assertThat(http.put("/api/vhost-limits/%2F/max-connections", Map.of("value", 1)).status())
                .isEqualTo(204);
            // anonymous-login-user is guest by default, as RabbitMQ 4's anonymous_login_user
            Client anonymous = new Client(parameters(broker).clientProperty("connection_name", "anon")
                .saslConfiguration(com.rabbitmq.stream.sasl.DefaultSaslConfiguration.ANONYMOUS));
            try {
                assertThat(http.get("/api/connections").list()).filteredOn(c -> "stream".equals(c.get("protocol")))
                    .singleElement().satisfies(c -> assertThat(c).containsEntry("user", "guest")
                        .containsEntry("auth_mechanism", "ANONYMOUS"));
                assertThatThrownBy(() -> new Client(parameters(broker))).as("max-connections 1 on /")
                    .hasMessageContaining("VIRTUAL_HOST_ACCESS_FAILURE");
            } finally {
                anonymous.close();
            }
        }
    }

    @Test
    void permissionsAreCheckedPerCommand() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            broker.admin().putUser("alice", "pw", List.of());
            // configure "cf-", write "wo-" and "cf-", read "ro-" and "cf-"
            broker.admin().setPermissions("alice", "/", "^cf-", "^(wo|cf)-", "^(ro|cf)-");
            Client guest = new Client(parameters(broker));
            Client alice = new Client(parameters(broker).username("alice").password("pw"));
            try {
                for (String stream : List.of("wo-s", "ro-s", "no-s")) {
                    assertThat(guest.create(stream).isOk()).isTrue();
                }
                assertThat(alice.create("no-x").getResponseCode()).isEqualTo(ACCESS_REFUSED);
                assertThat(alice.create("cf-x").isOk()).isTrue();
                assertThat(alice.delete("wo-s").getResponseCode()).isEqualTo(ACCESS_REFUSED);
                assertThat(alice.declarePublisher((byte) 0, null, "ro-s").getResponseCode())
                    .isEqualTo(ACCESS_REFUSED);
                assertThat(alice.declarePublisher((byte) 0, null, "wo-s").isOk()).isTrue();
                assertThat(alice.declarePublisher((byte) 0, null, "cf-x").getResponseCode())
                    .as("the id is taken").isEqualTo(PRECONDITION_FAILED);
                assertThat(alice.subscribe((byte) 0, "wo-s", OffsetSpecification.first(), 1).getResponseCode())
                    .isEqualTo(ACCESS_REFUSED);
                assertThat(alice.subscribe((byte) 0, "ro-s", OffsetSpecification.first(), 1).isOk()).isTrue();
                assertThat(alice.subscribe((byte) 0, "cf-x", OffsetSpecification.first(), 1).getResponseCode())
                    .isEqualTo((short) 0x03);
                assertThat(alice.metadata("no-s").get("no-s").getResponseCode()).isEqualTo(ACCESS_REFUSED);
                assertThat(alice.metadata("ro-s").get("ro-s").getResponseCode()).isEqualTo(OK);
                assertThat(alice.queryOffset("c", "wo-s").getResponseCode()).isEqualTo(ACCESS_REFUSED);
                assertThat(alice.streamStats("no-s").getResponseCode()).isEqualTo(ACCESS_REFUSED);
            } finally {
                alice.close();
                guest.close();
            }
        }
    }

    @Test
    void deletingAStreamInUseTellsItsClientsAndTheHttpApiListsTheConnections() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            List<String> updates = Collections.synchronizedList(new ArrayList<>());
            Client user = new Client(parameters(broker).clientProperty("connection_name", "stream-user")
                .metadataListener((stream, code) -> updates.add(stream + ":" + code)));
            Client deleter = new Client(parameters(broker));
            try {
                assertThat(user.create("doomed").isOk()).isTrue();
                assertThat(user.declarePublisher((byte) 1, null, "doomed").isOk()).isTrue();
                assertThat(user.subscribe((byte) 1, "doomed", OffsetSpecification.first(), 1).isOk()).isTrue();
                List<Map<String, Object>> connections = HttpApiClient.guest(broker).get("/api/connections").list();
                assertThat(connections).anySatisfy(c -> assertThat(c).containsEntry("protocol", "stream"));
                assertThat(broker.broker().counters().totals(BrokerCounters.STREAM).bytesIn()).isPositive();
                assertThat(deleter.delete("doomed").isOk()).isTrue();
                Amqp091Support.await().atMost(TIMEOUT).until(() -> !updates.isEmpty());
                assertThat(updates).containsExactly("doomed:" + STREAM_NOT_AVAILABLE);
                assertThat(user.deletePublisher((byte) 1).getResponseCode()).as("its publisher went with it")
                    .isEqualTo((short) 0x12);
                assertThat(user.unsubscribe((byte) 1).getResponseCode()).as("and its subscription")
                    .isEqualTo((short) 0x04);
            } finally {
                user.close();
                deleter.close();
            }
        }
    }
}
