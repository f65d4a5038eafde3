package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Command;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code basic.consume} and {@code basic.cancel}: no-ack, exclusive consumers (403), given and generated tags,
 * a tag used twice (530), cancel-ok and silence after it, the broker's own {@code basic.cancel} when the queue
 * goes, the redelivered flag, and unacknowledged messages coming back when the channel closes.
 */
class Amqp091ConsumeTest extends Amqp091ClientTest {

    /** An exclusive queue that is not auto-delete (server-named queues from queueDeclare() are both). */
    private String queue() throws Exception {
        return channel.queueDeclare("", false, true, false, null).getQueue();
    }

    @Test
    void noAckDeliversEverythingAndLeavesNothingBehind() throws Exception {
        String queue = queue();
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5");
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, consumer);
        List<Delivery> deliveries = consumer.awaitExactly(5);
        assertThat(consumer.bodies()).containsExactly("m1", "m2", "m3", "m4", "m5");
        assertThat(deliveries).extracting(d -> d.getEnvelope().getDeliveryTag()).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(deliveries).allSatisfy(d -> {
            assertThat(d.getEnvelope().isRedeliver()).isFalse();
            assertThat(d.getEnvelope().getExchange()).isEmpty();
            assertThat(d.getEnvelope().getRoutingKey()).isEqualTo(queue);
        });
        channel.close();
        assertThat(Amqp091Support.passive(connection, queue).getMessageCount()).isZero();
    }

    @Test
    void aGivenTagIsKeptAndAnEmptyOneIsGenerated() throws Exception {
        String queue = queue();
        Recorder given = new Recorder(channel);
        assertThat(channel.basicConsume(queue, false, "my-tag", given)).isEqualTo("my-tag");
        // the client calls handleConsumeOk on its consumer thread, after basicConsume returned
        await().atMost(TIMEOUT).until(() -> given.consumeOks.size() == 1);
        assertThat(given.consumeOks).containsExactly("my-tag");
        Recorder generated = new Recorder(channel);
        String tag = channel.basicConsume(queue, false, generated);
        assertThat(tag).startsWith("amq.ctag-").hasSizeGreaterThan("amq.ctag-".length());
        await().atMost(TIMEOUT).until(() -> generated.consumeOks.size() == 1);
        assertThat(generated.consumeOks).containsExactly(tag);
        String another = channel.basicConsume(queue, false, new Recorder(channel));
        assertThat(another).startsWith("amq.ctag-").isNotEqualTo(tag);
        // the same tag on another channel is another consumer
        Channel second = connection.createChannel();
        assertThat(second.basicConsume(queue, false, "my-tag", new Recorder(second))).isEqualTo("my-tag");
        assertThat(channel.queueDeclarePassive(queue).getConsumerCount()).isEqualTo(4);
    }

    /** Over a raw socket: the Java client refuses a tag in use itself (IllegalStateException). */
    @Test
    void aTagUsedTwiceOnAChannelIsNotAllowed() throws Exception {
        String queue = queue();
        try (Raw091Client client = Raw091Client.open(target, 0, 0, 0)) {
            client.send(1, new AMQP.Channel.Open.Builder().build());
            client.expect(AMQP.Channel.OpenOk.class);
            String own = unique("own");
            client.send(1, new AMQP.Queue.Declare.Builder().queue(own).exclusive(true).build());
            client.expect(AMQP.Queue.DeclareOk.class);
            client.send(1, new AMQP.Basic.Consume.Builder().queue(own).consumerTag("dup").build());
            client.expect(AMQP.Basic.ConsumeOk.class);
            client.send(1, new AMQP.Basic.Consume.Builder().queue(own).consumerTag("dup").build());
            // rabbit_channel: "attempt to reuse consumer tag", not_allowed, a connection exception
            client.expectConnectionClose(AMQP.NOT_ALLOWED, "NOT_ALLOWED - attempt to reuse consumer tag 'dup'");
        }
        assertThat(channel.queueDeclarePassive(queue).getQueue()).as("other connections go on").isEqualTo(queue);
    }

    @Test
    void anExclusiveConsumerKeepsOthersOut() throws Exception {
        String queue = queue();
        Recorder exclusive = new Recorder(channel);
        String tag = channel.basicConsume(queue, false, "", false, true, null, exclusive);
        Channel other = connection.createChannel();
        channelError(other, AMQP.ACCESS_REFUSED, "ACCESS_REFUSED - queue '" + queue + "' in vhost '/' in exclusive use",
            () -> other.basicConsume(queue, false, new Recorder(other)));
        channel.basicCancel(tag);
        Channel after = connection.createChannel();
        after.basicConsume(queue, false, new Recorder(after));
        assertThat(channel.queueDeclarePassive(queue).getConsumerCount()).isEqualTo(1);
    }

    @Test
    void anExclusiveConsumeOnAQueueWithConsumersIsRefused() throws Exception {
        String queue = queue();
        channel.basicConsume(queue, false, new Recorder(channel));
        Channel other = connection.createChannel();
        channelError(other, AMQP.ACCESS_REFUSED, "ACCESS_REFUSED - queue '" + queue + "' in vhost '/' in exclusive use",
            () -> other.basicConsume(queue, false, "", false, true, null, new Recorder(other)));
    }

    @Test
    void consumingAMissingQueueIsNotFound() throws Exception {
        String missing = unique("missing");
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + missing + "' in vhost '/'",
            () -> channel.basicConsume(missing, new Recorder(channel)));
    }

    @Test
    void afterCancelOkNothingMoreIsDelivered() throws Exception {
        String queue = queue();
        Recorder consumer = new Recorder(channel);
        String tag = channel.basicConsume(queue, true, consumer);
        sendToQueue(connection, queue, "before");
        consumer.awaitDeliveries(1);
        channel.basicCancel(tag);
        await().atMost(TIMEOUT).until(() -> consumer.cancelOks.size() == 1);
        assertThat(consumer.cancelOks).containsExactly(tag);
        sendToQueue(connection, queue, "after 1", "after 2");
        consumer.awaitExactly(1);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(2);
        assertThat(consumer.brokerCancels).isEmpty();
    }

    @Test
    void cancellingAnUnknownTagIsAnsweredWithCancelOk() throws Exception {
        // rabbit_channel:cancel_consumer: "Spec requires we ignore this situation"
        Command reply = channel.rpc(new AMQP.Basic.Cancel.Builder().consumerTag("never-used").build());
        assertThat(reply.getMethod()).isInstanceOfSatisfying(AMQP.Basic.CancelOk.class,
            ok -> assertThat(ok.getConsumerTag()).isEqualTo("never-used"));
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void deletingTheQueueCancelsItsConsumersFromTheBroker() throws Exception {
        String queue = queue();
        Channel c1 = connection.createChannel();
        Channel c2 = connection.createChannel();
        Recorder r1 = new Recorder(c1);
        Recorder r2 = new Recorder(c2);
        String tag1 = c1.basicConsume(queue, false, r1);
        String tag2 = c2.basicConsume(queue, true, "mine", r2);
        channel.queueDelete(queue);
        // consumer_cancel_notify: the client announces it, so the broker sends basic.cancel
        await().atMost(TIMEOUT).until(() -> r1.brokerCancels.size() == 1 && r2.brokerCancels.size() == 1);
        assertThat(r1.brokerCancels).containsExactly(tag1);
        assertThat(r2.brokerCancels).containsExactly(tag2);
        assertThat(r1.cancelOks).isEmpty();
        assertThat(c1.isOpen()).isTrue();
        assertThat(c2.isOpen()).isTrue();
        // the tag is free again on that channel
        String other = c2.queueDeclare().getQueue();
        assertThat(c2.basicConsume(other, true, "mine", new Recorder(c2))).isEqualTo("mine");
    }

    @Test
    void aRequeuedMessageIsRedelivered() throws Exception {
        String queue = queue();
        sendToQueue(connection, queue, "m1");
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitDeliveries(1);
        assertThat(consumer.deliveries.get(0).getEnvelope().isRedeliver()).isFalse();
        channel.basicReject(1, true);
        consumer.awaitDeliveries(2);
        Delivery again = consumer.deliveries.get(1);
        assertThat(Amqp091Support.text(again.getBody())).isEqualTo("m1");
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
        assertThat(again.getEnvelope().getDeliveryTag()).as("a new tag on the channel").isEqualTo(2);
        channel.basicAck(2, false);
        consumer.awaitExactly(2);
    }

    @Test
    void unackedMessagesGoBackWhenTheChannelClosesAndAreRedelivered() throws Exception {
        String queue = queue();
        sendToQueue(connection, queue, "m1", "m2", "m3");
        Channel first = connection.createChannel();
        Recorder firstConsumer = new Recorder(first);
        first.basicConsume(queue, false, firstConsumer);
        firstConsumer.awaitDeliveries(3);
        first.basicAck(2, false);
        first.close();

        Recorder second = new Recorder(channel);
        channel.basicConsume(queue, false, second);
        second.awaitExactly(2);
        assertThat(second.bodies()).containsExactly("m1", "m3");
        assertThat(second.deliveries).allSatisfy(d -> assertThat(d.getEnvelope().isRedeliver()).isTrue());
    }

    @Test
    void consumersOfOneQueueShareItsMessages() throws Exception {
        String queue = queue();
        Channel c1 = connection.createChannel();
        Channel c2 = connection.createChannel();
        c1.basicQos(1);
        c2.basicQos(1);
        Recorder r1 = new Recorder(c1);
        Recorder r2 = new Recorder(c2);
        c1.basicConsume(queue, false, r1);
        c2.basicConsume(queue, false, r2);
        sendToQueue(connection, queue, "m1", "m2", "m3");
        // one unacked each: two go out, one waits
        await().atMost(TIMEOUT).until(() -> r1.deliveries.size() + r2.deliveries.size() >= 2);
        await().during(Amqp091Support.QUIET).atMost(TIMEOUT)
            .until(() -> r1.deliveries.size() == 1 && r2.deliveries.size() == 1);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
    }

    @Test
    void consumeArgumentsRabbitMqDoesNotKnowAreIgnored() throws Exception {
        String queue = queue();
        sendToQueue(connection, queue, "m1");
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, "", false, false, java.util.Map.of("x-custom", "anything", "other", 7),
            consumer);
        consumer.awaitExactly(1);
    }

    /**
     * Consumer priorities (the consumer_priorities capability): an auto-ack consumer is never blocked, so one of
     * higher x-priority takes everything.
     */
    @Test
    void aHigherPriorityConsumerTakesEverythingWhileItCan() throws Exception {
        String queue = queue();
        Channel lowChannel = connection.createChannel();
        Recorder low = new Recorder(lowChannel);
        lowChannel.basicConsume(queue, true, "", false, false, java.util.Map.of("x-priority", -1), low);
        Recorder high = new Recorder(channel);
        channel.basicConsume(queue, true, "", false, false, java.util.Map.of("x-priority", 10), high);
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5");
        high.awaitExactly(5);
        assertThat(low.deliveries).isEmpty();
    }
}
