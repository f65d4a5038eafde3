package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.Symbol;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The routing key of a message sent to an exchange address, as RabbitMQ 4 takes it ({@code parse_target_v2_string},
 * {@code lookup_routing_key}): {@code /exchanges/e/key} routes with the key, {@code /exchanges/e} with the empty
 * key whatever the subject (only the v1 {@code /exchange/e} takes the subject), on a link's target and in a
 * {@code to} alike; and the delivery says which key in {@code x-routing-key}, the empty one too, to AMQP 1.0 and 0-9-1
 * consumers.
 */
class ExchangeAddressTest extends Amqp10ClientTestBase {
    private static final String EXCHANGE = "ea-direct";
    private static final String EMPTY_KEY = "ea-empty-key";
    private static final String SUBJECT_KEY = "ea-subject-key";

    @BeforeEach
    void topology() {
        Management management = management();
        management.exchange().name(EXCHANGE).type(Management.ExchangeType.DIRECT).declare();
        for (String queue : new String[] {EMPTY_KEY, SUBJECT_KEY}) {
            management.queue().name(queue).declare();
            management.queuePurge(queue);
        }
        management.binding().sourceExchange(EXCHANGE).destinationQueue(EMPTY_KEY).key("").bind();
        management.binding().sourceExchange(EXCHANGE).destinationQueue(SUBJECT_KEY).key("s").bind();
    }

    private Publisher exchangePublisher(String key) {
        Publisher publisher = key == null ? connection.publisherBuilder().exchange(EXCHANGE).build()
            : connection.publisherBuilder().exchange(EXCHANGE).key(key).build();
        closeAfter.add(publisher);
        return publisher;
    }

    private Publisher anonymousPublisher() {
        Publisher publisher = connection.publisherBuilder().build();
        closeAfter.add(publisher);
        return publisher;
    }

    private static void sent(Publisher publisher, Message message) throws InterruptedException {
        assertThat(publish(publisher, message).poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
    }

    /** The message is on {@code queue} alone, and says which exchange and key routed it. */
    private static void assertArrivedWithKey(String queue, String key) throws Exception {
        // a message routed by the other key would stay there
        String other = EMPTY_KEY.equals(queue) ? SUBJECT_KEY : EMPTY_KEY;
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).alias("on " + queue + " alone").until(() ->
            management().queueInfo(queue).messageCount() == 1 && management().queueInfo(other).messageCount() == 0);
        // taken pre-settled, so it is gone for the next check
        Map<Symbol, Object> annotations = rawGet(queue).getMessageAnnotations().getValue();
        assertThat(annotations).containsEntry(wire("x-exchange"), EXCHANGE);
        assertThat(annotations).as("x-routing-key is there").containsEntry(wire("x-routing-key"), key);
    }

    @Test
    void anExchangeTargetWithoutAKeyRoutesWithTheEmptyKeyNotTheSubject() throws Exception {
        Publisher publisher = exchangePublisher(null);
        sent(publisher, publisher.message(bytes("keyless")).subject("s"));
        assertArrivedWithKey(EMPTY_KEY, "");
    }

    @Test
    void anExchangeTargetWithAKeyRoutesWithIt() throws Exception {
        Publisher publisher = exchangePublisher("s");
        sent(publisher, publisher.message(bytes("keyed")));
        assertArrivedWithKey(SUBJECT_KEY, "s");
    }

    @Test
    void aToWithoutAKeyRoutesWithTheEmptyKey() throws Exception {
        Publisher publisher = anonymousPublisher();
        sent(publisher, publisher.message(bytes("to, keyless")).subject("s").toAddress().exchange(EXCHANGE).message());
        assertArrivedWithKey(EMPTY_KEY, "");
        sent(publisher, publisher.message(bytes("to, keyed")).toAddress().exchange(EXCHANGE).key("s").message());
        assertArrivedWithKey(SUBJECT_KEY, "s");
    }

    /** The v1 form takes the subject, and the empty key without one (RabbitMQ's {@code subject} routing key). */
    @Test
    void aV1ExchangeAddressTakesTheSubjectOrTheEmptyKey() throws Exception {
        Publisher publisher = anonymousPublisher();
        sent(publisher, publisher.message(bytes("v1, subject")).to("/exchange/" + EXCHANGE).subject("s"));
        assertArrivedWithKey(SUBJECT_KEY, "s");
        sent(publisher, publisher.message(bytes("v1, no subject")).to("/exchange/" + EXCHANGE));
        assertArrivedWithKey(EMPTY_KEY, "");
    }

    @Test
    void aZeroNineOneConsumerSeesTheEmptyKey() throws Exception {
        Publisher publisher = exchangePublisher(null);
        sent(publisher, publisher.message(bytes("for 0-9-1")));
        try (Channel channel = amqp091.createChannel()) {
            GetResponse got = awaitGet(channel, EMPTY_KEY);
            assertThat(got.getEnvelope().getExchange()).isEqualTo(EXCHANGE);
            assertThat(got.getEnvelope().getRoutingKey()).isEqualTo("");
            assertThat(text(got.getBody())).isEqualTo("for 0-9-1");
            channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
        }
    }

    private static String text(byte[] body) {
        return new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }
}
