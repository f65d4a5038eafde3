package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.ConnectionEnds;
import io.skiffmq.server.connection.ScopeErrors;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.Session;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Errors that end less than a connection (issue 17): a peer's link, session and channel errors are INFO lines
 * without a stack, a few a second and a timed summary however many the peer causes; a broker bug is ERROR with its
 * stack, never suppressed. A broker per test, so each starts with full buckets.
 */
@ExtendWith(LeakDetection.class)
class ScopeErrorsTest {
    private static final int ERRORS = 30;

    private RunningBroker broker;
    private LogCapture log;

    @BeforeEach
    void start() throws Exception {
        broker = RunningBroker.start();
        log = LogCapture.capture();
    }

    @AfterEach
    void stop() {
        log.close();
        broker.close();
    }

    private List<String> info(String containing) {
        return log.lines(Level.INFO, m -> m.contains(containing));
    }

    @Test
    void aPeersLinkErrorsAreAFewInfoLinesAndATimedSummary() throws Exception {
        try (jakarta.jms.Connection connection = new JmsConnectionFactory("guest", "guest", broker.amqpUri())
                .createConnection()) {
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            for (int i = 0; i < ERRORS; i++) {
                String queue = "/queues/missing-" + i;
                assertThatThrownBy(() -> session.createConsumer(session.createQueue(queue)))
                    .isInstanceOf(InvalidDestinationException.class);
            }
            assertFewLinesThenASummary(": detaching link ", "amqp:not-found", ": link detached with an error");
        }
    }

    @Test
    void aPeersChannelErrorsAreAFewInfoLinesAndATimedSummary() throws Exception {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
            for (int i = 0; i < ERRORS; i++) {
                com.rabbitmq.client.Channel channel = connection.createChannel();
                String queue = "missing-" + i;
                assertThatThrownBy(() -> channel.queueDeclarePassive(queue)).isInstanceOf(IOException.class);
            }
            assertFewLinesThenASummary(": closing channel ", "NOT_FOUND", ": channel closed by the broker");
        }
    }

    @Test
    void aBrokerBugIsErrorWithItsStackAndNeverSuppressed() {
        ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor();
        try {
            ScopeErrors errors = new ScopeErrors();
            for (int i = 0; i < ERRORS; i++) {
                errors.log(ScopeErrors.Scope.LINK, "peer -> local", "detaching link " + i, "amqp:internal-error boom",
                    true, new IllegalStateException("boom " + i), loop);
            }
            List<ILoggingEvent> bugs = log.events(Level.ERROR);
            assertThat(bugs).hasSize(ERRORS);
            assertThat(bugs).allSatisfy(e -> assertThat(e.getThrowableProxy()).isNotNull());
            assertThat(bugs.get(0).getFormattedMessage())
                .isEqualTo("connection peer -> local: detaching link 0: amqp:internal-error boom");
        } finally {
            loop.shutdownNow();
        }
    }

    /** The peer's ERRORS errors: a burst of INFO lines without a stack, then one timed summary of the rest. */
    private void assertFewLinesThenASummary(String marker, String condition, String summary) {
        List<String> lines = info(marker);
        assertThat(lines).hasSizeBetween(ConnectionEnds.BURST, ERRORS - 10);
        assertThat(lines.get(0)).contains(condition);
        await().atMost(Duration.ofSeconds(10)).until(() -> !info("similar messages in the last").isEmpty());
        assertThat(info("similar messages in the last")).singleElement().asString().endsWith(summary)
            .startsWith("suppressed " + (ERRORS - info(marker).size()) + " similar");
        assertThat(log.errors()).isEmpty();
        assertThat(withStack(Level.INFO)).isEmpty();
    }

    private List<ILoggingEvent> withStack(Level level) {
        return log.events(level).stream().filter(e -> e.getThrowableProxy() != null).toList();
    }
}
