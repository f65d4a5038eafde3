package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * AMQP 1.0's CC, as RabbitMQ 4 reads it: the {@code x-cc} message annotation, a list of strings, routes the message
 * through its exchange with those keys too ({@code rabbit_amqp_session:lookup_routing_key/5}); application
 * properties never do (they may not hold a list). Any other value is refused. Between protocols, a 0-9-1 CC header
 * and the annotation are each other's conversion.
 */
class Amqp10CcRoutesTest extends Amqp10ClientTestBase {

    private String boundQueue(String key) {
        String queue = unique("x-cc");
        management().queue().name(queue).declare();
        management().binding().sourceExchange("amq.direct").destinationQueue(queue).key(key).bind();
        return queue;
    }

    private Publisher.Status publish(Message message, Publisher publisher) throws InterruptedException {
        return publish(publisher, message).poll(10, TimeUnit.SECONDS);
    }

    @Test
    void theXccAnnotationRoutesWithItsKeysEachQueueOnce() throws Exception {
        String a = boundQueue("a");
        String b = boundQueue("b");
        String c = boundQueue("c");
        Publisher publisher = connection.publisherBuilder().exchange("amq.direct").key("a").build();
        closeAfter.add(publisher);
        Message message = publisher.message(bytes("copied")).annotation("x-cc", List.of("b", "a", "b"))
            .property("CC", "an application property is no CC");
        assertThat(publish(message, publisher)).isEqualTo(Publisher.Status.ACCEPTED);
        for (String queue : List.of(a, b)) {
            assertThat(management().queueInfo(queue).messageCount()).as(queue).isEqualTo(1);
        }
        assertThat(management().queueInfo(c).messageCount()).isZero();
        Message got = next(b);
        assertThat(text(got)).isEqualTo("copied");
        assertThat(got.annotation("x-cc")).isEqualTo(List.of("b", "a", "b"));
    }

    @Test
    void anXccThatIsNoListOfStringsIsRejected() throws Exception {
        String a = boundQueue("a");
        Publisher publisher = connection.publisherBuilder().exchange("amq.direct").key("a").build();
        closeAfter.add(publisher);
        assertThat(publish(publisher.message(bytes("m")).annotation("x-cc", "b"), publisher))
            .isEqualTo(Publisher.Status.REJECTED);
        assertThat(publish(publisher.message(bytes("m")).annotation("x-cc", List.of("b", 1)), publisher))
            .isEqualTo(Publisher.Status.REJECTED);
        assertThat(management().queueInfo(a).messageCount()).isZero();
    }

    @Test
    void aCcHeaderReachesAnAmqp10ConsumerAsTheXccAnnotation() throws Exception {
        String a = boundQueue("a");
        String b = boundQueue("b");
        Channel channel = amqp091.createChannel();
        channel.confirmSelect();
        channel.basicPublish("amq.direct", "a", new com.rabbitmq.client.AMQP.BasicProperties.Builder()
            .headers(Map.of("CC", List.of("b"), "BCC", List.of("c"))).build(), bytes("from 0-9-1"));
        channel.waitForConfirmsOrDie(10_000);
        Message got = next(b);
        assertThat(got.annotation("x-cc")).isEqualTo(List.of("b"));
        assertThat(got.annotation("x-bcc")).isNull();
        assertThat(got.hasProperty("BCC")).isFalse();
        GetResponse other = awaitGet(channel, a);
        assertThat(other.getProps().getHeaders()).containsKey("CC").doesNotContainKey("BCC");
        channel.close();
    }
}
