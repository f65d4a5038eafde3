package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Queues that hold their publishers back ({@link io.skiffmq.core.queue.PublisherFlow}) with real clients, on a
 * broker whose queues keep 256 KiB in memory: a publisher far ahead of a consumer that keeps up loses nothing and
 * is never stuck (AMQP 1.0 link credit, 0-9-1 socket reads), and a consumer that stops does not hold anyone: the
 * queue buffers for it, as RabbitMQ's would.
 */
class PublisherFlowClientTest {
    private static final int BODY = 1024;
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("queue-memory-limit=262144");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static byte[] body(int sequence) {
        return ByteBuffer.allocate(BODY).putInt(sequence).array();
    }

    // ---- AMQP 0-9-1 -------------------------------------------------------------------------------------------

    private static com.rabbitmq.client.Connection connect091() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        return factory.newConnection();
    }

    @Test
    void amqp091APublisherAheadOfItsConsumerLosesNothing() throws Exception {
        int count = 10_000; // 10 MiB through a queue that keeps 256 KiB in memory
        try (com.rabbitmq.client.Connection publishing = connect091();
                com.rabbitmq.client.Connection consuming = connect091()) {
            Channel consumer = consuming.createChannel();
            String queue = consumer.queueDeclare("flow-091", false, false, false, null).getQueue();
            consumer.basicQos(100);
            AtomicInteger next = new AtomicInteger();
            AtomicReference<String> wrong = new AtomicReference<>();
            CountDownLatch all = new CountDownLatch(count);
            DeliverCallback onDelivery = (tag, delivery) -> {
                int sequence = ByteBuffer.wrap(delivery.getBody()).getInt();
                if (sequence != next.getAndIncrement()) {
                    wrong.compareAndSet(null, "got " + sequence + " where " + (next.get() - 1) + " was due");
                }
                consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                all.countDown();
            };
            consumer.basicConsume(queue, false, onDelivery, tag -> { });

            Channel publisher = publishing.createChannel();
            publisher.confirmSelect();
            for (int i = 0; i < count; i++) {
                publisher.basicPublish("", queue, null, body(i));
                if (i % 1000 == 999) {
                    publisher.waitForConfirmsOrDie(30_000);
                }
            }
            publisher.waitForConfirmsOrDie(30_000);
            assertThat(all.await(60, TimeUnit.SECONDS)).as("%d of %d delivered", count - all.getCount(), count)
                .isTrue();
            assertThat(wrong.get()).as("in order").isNull();
        }
    }

    @Test
    void amqp091AConsumerThatStopsHoldsNobody() throws Exception {
        int count = 2_000; // 2 MiB: past the memory limit, paged
        try (com.rabbitmq.client.Connection connection = connect091()) {
            Channel consumer = connection.createChannel();
            String queue = consumer.queueDeclare("flow-091-stalled", false, false, false, null).getQueue();
            consumer.basicQos(10);
            CountDownLatch tookItsPrefetch = new CountDownLatch(10);
            consumer.basicConsume(queue, false, (tag, delivery) -> tookItsPrefetch.countDown(), tag -> { });

            Channel publisher = connection.createChannel();
            publisher.confirmSelect();
            for (int i = 0; i < count; i++) {
                publisher.basicPublish("", queue, null, body(i));
                if (i % 100 == 99) {
                    publisher.waitForConfirmsOrDie(30_000); // the consumer never acks: stalled after 10
                }
            }
            publisher.waitForConfirmsOrDie(30_000);
            assertThat(tookItsPrefetch.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(publisher.queueDeclarePassive(queue).getMessageCount()).isEqualTo(count - 10);
        }
    }

    // ---- AMQP 1.0 ---------------------------------------------------------------------------------------------

    private static jakarta.jms.Connection connectJms(String options) throws JMSException {
        jakarta.jms.Connection connection = new JmsConnectionFactory("guest", "guest",
            broker.amqpUri() + "?" + options).createConnection();
        connection.start();
        return connection;
    }

    @Test
    void amqp10APublisherAheadOfItsConsumerLosesNothing() throws Exception {
        int count = 10_000;
        try (jakarta.jms.Connection publishing = connectJms("jms.forceAsyncSend=true");
                jakarta.jms.Connection consuming = connectJms("jms.prefetchPolicy.all=100")) {
            Session consumerSession = consuming.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = consumerSession.createConsumer(consumerSession.createQueue("flow-10"));
            AtomicInteger next = new AtomicInteger();
            AtomicReference<String> wrong = new AtomicReference<>();
            CountDownLatch all = new CountDownLatch(count);
            consumer.setMessageListener(message -> {
                try {
                    int sequence = ((BytesMessage) message).readInt();
                    if (sequence != next.getAndIncrement()) {
                        wrong.compareAndSet(null, "got " + sequence + " where " + (next.get() - 1) + " was due");
                    }
                } catch (JMSException e) {
                    wrong.compareAndSet(null, e.toString());
                }
                all.countDown();
            });

            Session session = publishing.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue("flow-10"));
            producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            for (int i = 0; i < count; i++) {
                BytesMessage message = session.createBytesMessage();
                message.writeBytes(body(i));
                producer.send(message);
            }
            assertThat(all.await(60, TimeUnit.SECONDS)).as("%d of %d delivered", count - all.getCount(), count)
                .isTrue();
            assertThat(wrong.get()).as("in order").isNull();
        }
    }

    @Test
    void amqp10AConsumerThatStopsHoldsNobody() throws Exception {
        int count = 2_000;
        try (jakarta.jms.Connection connection = connectJms("jms.prefetchPolicy.all=10&jms.forceSyncSend=true")) {
            Session consumerSession = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer consumer = consumerSession.createConsumer(consumerSession.createQueue("flow-10-stalled"));
            assertThat(consumer.receiveNoWait()).as("nothing yet").isNull(); // attached, with its credit

            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue("flow-10-stalled"));
            producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            for (int i = 0; i < count; i++) {
                BytesMessage message = session.createBytesMessage();
                message.writeBytes(body(i));
                producer.send(message); // each send waits for the broker's outcome
            }
            // all taken; the consumer's prefetch of 10 went to it
            Amqp091Support.await().atMost(Amqp091Support.TIMEOUT)
                .until(() -> broker.vhost("/").queue("flow-10-stalled").readyCount() == count - 10);
        }
    }

    /**
     * A queue that holds its publishers takes back an AMQP 1.0 publisher's credit at once, not when the publisher
     * has used half a batch: a batch of 1,000 16 MiB messages is 16 GB. The deliveries the publisher had sent before
     * it heard are still taken [2.6.7], and nothing is lost.
     */
    @Test
    void amqp10AHeldPublisherHasItsCreditTakenBackAndWhatItHadSentIsStillTaken() throws Exception {
        try (com.rabbitmq.client.Connection consuming = connect091();
                RawClient client = RawClient.openSession(broker.port())) {
            Channel consumer = consuming.createChannel();
            consumer.queueDeclare("flow-revoke", false, false, false, null);
            consumer.basicQos(10);
            AtomicInteger consumed = new AtomicInteger();
            consumer.basicConsume("flow-revoke", false, (tag, delivery) -> {
                LockSupport.parkNanos(2_000_000); // a consumer slower than its publisher: the workload, not a wait
                consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                consumed.incrementAndGet();
            }, tag -> { });

            client.attachSender(0, "/queues/flow-revoke", SenderSettleMode.UNSETTLED);
            int batch = client.readUntil(Flow.class).getLinkCredit().intValue();
            byte[] message = Messages.data("x".repeat(4096), null);
            // the queue holds publishers only for consumers whose rate it has measured and that are busy: the rest
            // of the batch comes once the consumer has taken a part of the first 200 and still has some to take
            int first = 200;
            for (int i = 0; i < first; i++) {
                client.transfer(0, i, message, false);
            }
            client.flush();
            Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> consumed.get() >= 60);
            for (int i = first; i < batch; i++) {
                client.transfer(0, i, message, false); // all of it, before reading what the broker says
            }
            client.flush();
            Flow revoked = null;
            long settled = 0;
            while (settled < batch) {
                RawClient.Frame frame = client.read();
                if (frame.body() instanceof Flow flow && flow.getHandle() != null && revoked == null
                        && flow.getLinkCredit().longValue() == 0) {
                    revoked = flow;
                } else if (frame.body() instanceof Disposition disposition) {
                    assertThat(disposition.getState()).isInstanceOf(Accepted.class);
                    long last = disposition.getLast() == null ? disposition.getFirst().longValue()
                        : disposition.getLast().longValue();
                    settled += last - disposition.getFirst().longValue() + 1;
                } else {
                    assertThat(frame.body()).as("no detach, end or close").isInstanceOf(Flow.class);
                }
            }
            assertThat(revoked).as("credit taken back while the queue held its publishers").isNotNull();
            assertThat(revoked.getDeliveryCount().longValue()).as("before the batch was used up").isLessThan(batch);
            Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> consumed.get() == batch);
        }
    }
}
