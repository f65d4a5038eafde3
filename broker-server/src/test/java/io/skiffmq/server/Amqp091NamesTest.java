package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import org.junit.jupiter.api.Test;

/**
 * Exchange and queue names lose every CR and LF, wherever they are in the name, in the methods that
 * {@code rabbit_channel} strips them in ({@code strip_cr_lf/1}): exchange declare, delete, bind and unbind, and queue
 * declare, delete, bind and unbind. {@code basic.publish}, {@code basic.get}, {@code basic.consume} and
 * {@code queue.purge} look the name up as sent, as RabbitMQ does.
 */
class Amqp091NamesTest extends Amqp091ClientTest {

    /** {@code name} with CR and LF put in front, in the middle and at the end. */
    private static String garbled(String name) {
        return "\r" + name.substring(0, 3) + "\n\r" + name.substring(3) + "\n\r\n";
    }

    @Test
    void queueDeclareStripsCrAndLfAndAnswersWithTheStrippedName() throws Exception {
        String q = unique("names-q");
        AMQP.Queue.DeclareOk ok = channel.queueDeclare(garbled(q), false, false, false, null);
        assertThat(ok.getQueue()).isEqualTo(q);
        assertThat(queueExists(connection, q)).isTrue();
        assertThat(channel.queueDeclarePassive(garbled(q)).getQueue()).isEqualTo(q);
        // the declared name is the channel's last queue: "" means it
        channel.basicPublish("", q, null, bytes("one"));
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive("").getMessageCount() == 1);
        assertThat(channel.queueDelete(garbled(q)).getMessageCount()).isEqualTo(1);
        assertThat(queueExists(connection, q)).isFalse();
    }

    @Test
    void exchangeMethodsAndBindingsStripCrAndLf() throws Exception {
        String x = unique("names-x");
        String y = unique("names-y");
        String q = unique("names-bound");
        channel.exchangeDeclare(garbled(x), BuiltinExchangeType.DIRECT, false, false, null);
        channel.exchangeDeclarePassive(x);
        channel.exchangeDeclarePassive(garbled(x));
        channel.exchangeDeclare(garbled(y), BuiltinExchangeType.FANOUT, false, false, null);
        channel.queueDeclare(q, false, false, false, null);
        channel.exchangeBind(garbled(y), garbled(x), "k");
        channel.queueBind(garbled(q), garbled(y), "");
        channel.confirmSelect();
        channel.basicPublish(x, "k", null, bytes("through both"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(channel.queueDeclarePassive(q).getMessageCount()).isEqualTo(1);

        channel.queueUnbind(garbled(q), garbled(y), "");
        channel.exchangeUnbind(garbled(y), garbled(x), "k");
        channel.basicPublish(x, "k", null, bytes("nowhere"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(channel.queueDeclarePassive(q).getMessageCount()).as("both bindings gone").isEqualTo(1);

        channel.exchangeDelete(garbled(y));
        channel.exchangeDelete(garbled(x));
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + x + "' in vhost '/'",
            () -> channel.exchangeDeclarePassive(x));
        channel = connection.createChannel();
        channel.queueDelete(q);
    }

    @Test
    void publishGetConsumeAndPurgeTakeTheNameAsSent() throws Exception {
        String q = unique("names-as-sent");
        channel.queueDeclare(q, false, false, false, null);
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + q + "\n' in vhost '/'",
            () -> channel.basicGet(q + "\n", true));
        channel = connection.createChannel();
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + q + "\n' in vhost '/'",
            () -> channel.queuePurge(q + "\n"));
        channel = connection.createChannel();
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + q + "\n' in vhost '/'",
            () -> channel.basicConsume(q + "\n", true, (tag, d) -> { }, tag -> { }));
        channel = connection.createChannel();
        channel.basicPublish("amq.direct\n", q, null, bytes("to a missing exchange"));
        Amqp091Support.awaitChannelError(channel, AMQP.NOT_FOUND,
            "NOT_FOUND - no exchange 'amq.direct\n' in vhost '/'");
        channel = connection.createChannel();
        channel.queueDelete(q);
    }
}
