package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code /api/topic-permissions} as RabbitMQ's management API has it ({@code rabbit_mgmt_wm_topic_permission[s]}):
 * list, one user's in one virtual host (a list, 404 when none), PUT of one exchange's (201 when the user had none
 * there, 204 after), DELETE of all or of one exchange's; and the lists per virtual host and per user. What is set
 * applies to a 0-9-1 publisher at once; administrators only.
 */
@ExtendWith(LeakDetection.class)
class HttpApiTopicPermissionsTest {
    private static RunningBroker broker;
    private static HttpApiClient api;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        api = HttpApiClient.guest(broker);
        broker.admin().putUser("tina", "pw", List.of("management"));
        broker.admin().setPermissions("tina", "/", ".*", ".*", ".*");
        broker.vhost("/").declareExchange(new io.skiffmq.core.Exchange("tp.x", io.skiffmq.core.Exchange.Type.TOPIC,
            false, false, false, Map.of()));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Map<String, Object> permission(String exchange, String write, String read) {
        return Map.of("user", "tina", "vhost", "/", "exchange", exchange, "write", write, "read", read);
    }

    @Test
    void setListAndClearTopicPermissions() throws Exception {
        assertThat(api.get("/api/topic-permissions/%2F/tina").status()).as("none yet").isEqualTo(404);
        assertThat(api.delete("/api/topic-permissions/%2F/tina").status()).isEqualTo(404);

        assertThat(api.put("/api/topic-permissions/%2F/tina", Map.of("exchange", "amq.topic", "write",
            "^{username}\\.", "read", ".*")).status()).isEqualTo(201);
        assertThat(api.put("/api/topic-permissions/%2F/tina", Map.of("exchange", "tp.x", "write", "^a", "read",
            "^b")).status()).as("the user had some there").isEqualTo(204);
        List<Map<String, Object>> mine = api.get("/api/topic-permissions/%2F/tina").list();
        assertThat(mine).containsExactlyInAnyOrder(permission("amq.topic", "^{username}\\.", ".*"),
            permission("tp.x", "^a", "^b"));
        assertThat(api.get("/api/topic-permissions").list()).containsAll(mine);
        assertThat(api.get("/api/vhosts/%2F/topic-permissions").list()).containsExactlyInAnyOrderElementsOf(mine);
        assertThat(api.get("/api/users/tina/topic-permissions").list()).containsExactlyInAnyOrderElementsOf(mine);

        try (Connection tina = VirtualHostTest.factory(broker, "/", "tina", "pw").newConnection()) {
            Channel channel = tina.createChannel();
            channel.confirmSelect();
            channel.basicPublish("amq.topic", "tina.news", null, bytes("mine"));
            channel.waitForConfirmsOrDie(10_000);
            channel.basicPublish("amq.topic", "bob.news", null, bytes("not mine"));
            awaitChannelError(channel, 403, "ACCESS_REFUSED - write access to topic 'bob.news' in exchange "
                + "'amq.topic' in vhost '/' refused for user 'tina'");

            assertThat(api.delete("/api/topic-permissions/%2F/tina/amq.topic").status()).isEqualTo(204);
            assertThat(api.get("/api/topic-permissions/%2F/tina").list()).containsExactly(permission("tp.x", "^a",
                "^b"));
            Channel again = tina.createChannel();
            again.confirmSelect();
            again.basicPublish("amq.topic", "bob.news", null, bytes("allowed now"));
            again.waitForConfirmsOrDie(10_000);
        }
        assertThat(api.delete("/api/topic-permissions/%2F/tina").status()).isEqualTo(204);
        assertThat(api.get("/api/topic-permissions/%2F/tina").status()).isEqualTo(404);
        assertThat(api.get("/api/vhosts/%2F/topic-permissions").list()).isEmpty();
    }

    @Test
    void aMissingUserOrVirtualHostAndBadBodies() throws Exception {
        Map<String, Object> body = Map.of("exchange", "amq.topic", "write", ".*", "read", ".*");
        HttpApiClient.Answer noUser = api.put("/api/topic-permissions/%2F/nobody", body);
        assertThat(noUser.status()).isEqualTo(400);
        assertThat(noUser.map()).containsEntry("reason", "vhost_or_user_not_found");
        assertThat(api.put("/api/topic-permissions/nowhere/tina", body).status()).isEqualTo(400);
        assertThat(api.get("/api/topic-permissions/nowhere/tina").status()).isEqualTo(404);
        assertThat(api.get("/api/vhosts/nowhere/topic-permissions").status()).isEqualTo(404);
        assertThat(api.get("/api/users/nobody/topic-permissions").status()).isEqualTo(404);
        assertThat(api.get("/api/users/nobody/permissions").status()).isEqualTo(404);
        assertThat(api.put("/api/topic-permissions/%2F/tina", Map.of("exchange", "amq.topic", "write", ".*"))
            .status()).as("read is missing").isEqualTo(400);
        assertThat(api.put("/api/topic-permissions/%2F/tina", Map.of("exchange", "amq.topic", "write", "(",
            "read", ".*")).status()).as("not a regular expression").isEqualTo(400);
        assertThat(api.get("/api/topic-permissions/%2F/tina").status()).as("nothing was set").isEqualTo(404);

        HttpApiClient monitor = new HttpApiClient(broker.managementPort(), "tina", "pw");
        assertThat(monitor.get("/api/topic-permissions").status()).as("administrators only").isEqualTo(401);
    }
}
