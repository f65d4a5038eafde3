package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A shared durable subscription and its durable messages survive a clean restart on the same data directory. */
@ExtendWith(LeakDetection.class)
class SharedSubscriptionRestartTest {
    @TempDir
    Path dir;

    @Test
    void aSharedDurableSubscriptionKeepsItsMessagesAcrossARestart() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            try (Connection withId = SharedSubscriptionTest.connect(broker, "keeper");
                    Connection global = SharedSubscriptionTest.connect(broker, null)) {
                Session session = withId.createSession(false, Session.AUTO_ACKNOWLEDGE);
                Topic topic = session.createTopic("kept");
                session.createSharedDurableConsumer(topic, "archive").close();
                Session globalSession = global.createSession(false, Session.AUTO_ACKNOWLEDGE);
                globalSession.createSharedDurableConsumer(topic, "archive").close();
                MessageProducer producer = session.createProducer(topic);
                producer.send(session.createTextMessage("durable-1"));
                producer.send(session.createTextMessage("durable-2"));
            }
        }
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            assertThat(broker.vhost("/").queue("jms-subscription:keeper:archive").readyCount()).isEqualTo(2);
            try (Connection withId = SharedSubscriptionTest.connect(broker, "keeper");
                    Connection global = SharedSubscriptionTest.connect(broker, null)) {
                Session session = withId.createSession(false, Session.AUTO_ACKNOWLEDGE);
                Topic topic = session.createTopic("kept");
                MessageConsumer consumer = session.createSharedDurableConsumer(topic, "archive");
                assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("durable-1");
                assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("durable-2");
                Session globalSession = global.createSession(false, Session.AUTO_ACKNOWLEDGE);
                MessageConsumer globalConsumer = globalSession.createSharedDurableConsumer(topic, "archive");
                assertThat(((TextMessage) globalConsumer.receive(10_000)).getText()).isEqualTo("durable-1");
                assertThat(((TextMessage) globalConsumer.receive(10_000)).getText()).isEqualTo("durable-2");
                session.createProducer(topic).send(session.createTextMessage("after the restart"));
                assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("after the restart");
                assertThat(((TextMessage) globalConsumer.receive(10_000)).getText()).isEqualTo("after the restart");
                consumer.close();
                globalConsumer.close();
                session.unsubscribe("archive");
                globalSession.unsubscribe("archive");
            }
        }
    }
}
