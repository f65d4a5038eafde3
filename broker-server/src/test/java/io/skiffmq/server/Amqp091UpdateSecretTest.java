package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.impl.CredentialsProvider;
import com.rabbitmq.client.impl.CredentialsRefreshService;
import io.skiffmq.codec.testing.LeakDetection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code connection.update-secret} as the RabbitMQ Java client sends it (its credentials refresh: an expiring
 * {@code CredentialsProvider} and the refresh action the connection registers, run here by hand), answered as
 * RabbitMQ answers it for users of its internal database ({@code rabbit_reader}, {@code rabbit_access_control:
 * update_state/2}): the secret itself is not read, since such a user's credentials never expire; access to the
 * virtual host is checked again, and a user who lost it is refused with 530.
 */
@ExtendWith(LeakDetection.class)
class Amqp091UpdateSecretTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        broker.admin().putUser("rotating", "pw", List.of());
        broker.admin().setPermissions("rotating", "/", ".*", ".*", ".*");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Credentials that say they expire, so the client registers a refresh; the next secret is settable. */
    private static final class ExpiringCredentials implements CredentialsProvider {
        private final String user;
        volatile String secret;

        ExpiringCredentials(String user, String secret) {
            this.user = user;
            this.secret = secret;
        }

        @Override
        public String getUsername() {
            return user;
        }

        @Override
        public String getPassword() {
            return secret;
        }

        @Override
        public Duration getTimeBeforeExpiration() {
            return Duration.ofHours(1);
        }
    }

    /** Keeps the refresh action the connection registers, for the test to run when it likes. */
    private static final class ManualRefresh implements CredentialsRefreshService {
        volatile Callable<Boolean> action;

        @Override
        public String register(CredentialsProvider credentialsProvider, Callable<Boolean> refreshAction) {
            action = refreshAction;
            return "manual";
        }

        @Override
        public void unregister(CredentialsProvider credentialsProvider, String registrationId) {
        }

        @Override
        public boolean isApproachingExpiration(Duration timeBeforeExpiration) {
            return false;
        }
    }

    private static Connection connect(ExpiringCredentials credentials, ManualRefresh refresh) throws Exception {
        ConnectionFactory factory = VirtualHostTest.factory(broker, "/", credentials.user, credentials.secret);
        factory.setCredentialsProvider(credentials);
        factory.setCredentialsRefreshService(refresh);
        Connection connection = factory.newConnection();
        assertThat(refresh.action).as("the client registered its refresh").isNotNull();
        return connection;
    }

    @Test
    void anySecretIsAnsweredWithUpdateSecretOkAndTheConnectionGoesOn() throws Exception {
        ExpiringCredentials credentials = new ExpiringCredentials("rotating", "pw");
        ManualRefresh refresh = new ManualRefresh();
        try (Connection connection = connect(credentials, refresh)) {
            credentials.secret = "not the password, as a token would not be";
            assertThat(refresh.action.call()).as("update-secret-ok").isTrue();
            credentials.secret = "pw";
            assertThat(refresh.action.call()).isTrue();
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            channel.basicPublish("", queue, null, new byte[] {1});
            assertThat(channel.basicGet(queue, true)).isNotNull();
            assertThat(connection.isOpen()).isTrue();
        }
    }

    @Test
    void aUserWhoLostAccessToTheVirtualHostIsRefused() throws Exception {
        broker.admin().putUser("revoked", "pw", List.of());
        broker.admin().setPermissions("revoked", "/", ".*", ".*", ".*");
        ManualRefresh refresh = new ManualRefresh();
        Connection connection = connect(new ExpiringCredentials("revoked", "pw"), refresh);
        broker.admin().clearPermissions("revoked", "/");
        assertThat(refresh.action.call()).as("refused: the connection closed").isFalse();
        assertThat(connection.isOpen()).isFalse();
        AMQP.Connection.Close close = (AMQP.Connection.Close) connection.getCloseReason().getReason();
        assertThat(close.getReplyCode()).isEqualTo(AMQP.NOT_ALLOWED);
        assertThat(close.getReplyText()).isEqualTo("NOT_ALLOWED - access to vhost '/' refused for user 'revoked'");
        assertThat(close.getClassId()).isEqualTo(10);
        assertThat(close.getMethodId()).as("connection.update-secret").isEqualTo(70);
    }
}
