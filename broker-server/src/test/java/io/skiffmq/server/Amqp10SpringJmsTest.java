package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.MessageProducer;
import jakarta.jms.TextMessage;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.core.JmsTemplate;
import org.springframework.jms.listener.DefaultMessageListenerContainer;

/**
 * Spring JMS on Qpid JMS with locally transacted sessions: {@code JmsTemplate} commits each send and receive, a
 * rollback in its session callback sends nothing, and a {@code DefaultMessageListenerContainer} with a selector,
 * whose listener throws once, gets the message it selects again, redelivered, and commits it the second time, while
 * the message it does not select stays in the queue.
 */
@ExtendWith(LeakDetection.class)
class Amqp10SpringJmsTest {
    private static RunningBroker broker;
    private static CachingConnectionFactory connections;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        ConnectionFactory qpid = new JmsConnectionFactory("guest", "guest", broker.amqpUri());
        connections = new CachingConnectionFactory(qpid);
    }

    @AfterAll
    static void stop() {
        connections.destroy();
        broker.close();
    }

    private static JmsTemplate transactedTemplate() {
        JmsTemplate template = new JmsTemplate(connections);
        template.setSessionTransacted(true);
        template.setReceiveTimeout(5000);
        return template;
    }

    @Test
    void jmsTemplateCommitsWhatItSendsAndRollsBackWhatTheCallbackRollsBack() {
        JmsTemplate template = transactedTemplate();
        template.execute(session -> {
            MessageProducer producer = session.createProducer(session.createQueue("spring-tx"));
            producer.send(session.createTextMessage("rolled back"));
            session.rollback();
            producer.send(session.createTextMessage("committed in the callback"));
            session.commit();
            producer.close();
            return null;
        }, true);
        template.convertAndSend("spring-tx", "committed by the template");

        assertThat(template.receiveAndConvert("spring-tx")).isEqualTo("committed in the callback");
        assertThat(template.receiveAndConvert("spring-tx")).isEqualTo("committed by the template");
        template.convertAndSend("spring-tx", "marker");
        assertThat(template.receiveAndConvert("spring-tx")).as("nothing else was sent").isEqualTo("marker");
    }

    @Test
    void aSelectingListenerThatThrowsOnceIsRolledBackAndGetsTheMessageAgain() throws Exception {
        List<Boolean> redelivered = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMessageListenerContainer container = new DefaultMessageListenerContainer();
        container.setConnectionFactory(connections);
        container.setDestinationName("spring-listener");
        container.setSessionTransacted(true);
        container.setMessageSelector("kind = 'work' AND JMSPriority > 3");
        container.setMessageListener((jakarta.jms.MessageListener) message -> {
            try {
                redelivered.add(message.getJMSRedelivered());
                if (redelivered.size() == 1) {
                    throw new IllegalStateException("the first attempt fails");
                }
                assertThat(((TextMessage) message).getText()).isEqualTo("work");
                done.countDown();
            } catch (JMSException e) {
                throw new IllegalStateException(e);
            }
        });
        container.setErrorHandler(failure -> { }); // the first attempt's failure is expected: no stack trace
        container.afterPropertiesSet();
        container.start();
        try {
            JmsTemplate template = transactedTemplate();
            template.convertAndSend("spring-listener", "not selected", m -> {
                m.setStringProperty("kind", "other");
                return m;
            });
            template.convertAndSend("spring-listener", "work", m -> {
                m.setStringProperty("kind", "work");
                return m;
            });
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(redelivered).containsExactly(false, true);
        } finally {
            container.shutdown();
        }
        JmsTemplate template = transactedTemplate();
        template.convertAndSend("spring-listener", "marker");
        assertThat(template.receiveAndConvert("spring-listener")).as("left for others by the selector")
            .isEqualTo("not selected");
        assertThat(template.receiveAndConvert("spring-listener")).as("the second attempt was committed")
            .isEqualTo("marker");
    }
}
