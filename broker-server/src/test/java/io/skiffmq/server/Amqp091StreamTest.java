package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Declaring streams over AMQP 0-9-1 ({@code x-queue-type: stream}) and what RabbitMQ 4 refuses, with its codes and
 * texts: properties a stream cannot have ({@code rabbit_stream_queue:declare/2}), arguments of other queue types and
 * bad values ({@code rabbit_amqqueue:check_declare_arguments/3}), consuming without a prefetch, with automatic
 * acknowledgement or under a channel-wide limit, {@code basic.get} and {@code queue.purge}
 * ({@code rabbit_stream_queue:consume/3}, {@code rabbit_channel}).
 */
class Amqp091StreamTest extends Amqp091StreamTestBase {
    @Test
    void aStreamIsDeclaredWithItsArgumentsAndRedeclaredEquivalently() throws Exception {
        String q = name("stream");
        Map<String, Object> arguments = stream("x-max-length-bytes", 20_000_000_000L, "x-max-age", "7D",
            "x-stream-max-segment-size-bytes", 100_000_000, "x-stream-filter-size-bytes", 32,
            "x-initial-cluster-size", 3, "x-queue-leader-locator", "balanced");
        AMQP.Queue.DeclareOk ok = channel.queueDeclare(q, true, false, false, arguments);
        assertThat(ok.getMessageCount()).isZero();
        assertThat(channel.queueDeclare(q, true, false, false, arguments).getQueue()).isEqualTo(q);
        assertThat(channel.queueDeclarePassive(q).getQueue()).isEqualTo(q);
        if (!target.external()) {
            assertThat(target.broker().vhost("/").queue(q).type().alias()).isEqualTo("stream");
        }
        // another value of a compared argument: 406, RabbitMQ's inequivalence
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'x-max-age' for "
            + "queue '" + q + "' in vhost '/': received '8D' but current is '7D'",
            () -> channel.queueDeclare(q, true, false, false, stream("x-max-length-bytes", 20_000_000_000L,
                "x-max-age", "8D", "x-stream-max-segment-size-bytes", 100_000_000, "x-stream-filter-size-bytes",
                32, "x-initial-cluster-size", 3, "x-queue-leader-locator", "balanced")));
    }

    @Test
    void propertiesAStreamCannotHaveAre406InRabbitMqsOrder() throws Exception {
        String q = name("props");
        String queue = "queue '" + q + "' in vhost '/'";
        refused(q, true, true, true, stream(), "invalid property 'auto-delete' for " + queue);
        refused(q, true, true, false, stream(), "invalid property 'exclusive-owner' for " + queue);
        refused(q, false, false, false, stream(), "invalid property 'non-durable' for " + queue);
        refused("", true, false, false, stream(), "Cannot declare a server-named queue for type rabbit_stream_queue");
    }

    @Test
    void argumentsOfOtherQueueTypesAreRefused() throws Exception {
        String q = name("others");
        for (String key : List.of("x-max-length", "x-message-ttl", "x-dead-letter-exchange", "x-max-priority",
                "x-overflow", "x-expires", "x-single-active-consumer", "x-delivery-limit",
                "x-quorum-initial-group-size")) {
            Object value = key.equals("x-overflow") || key.equals("x-dead-letter-exchange") ? "x"
                : key.equals("x-single-active-consumer") ? (Object) true : (Object) 10;
            refused(q, true, false, false, stream(key, value), "invalid arg '" + key + "' for queue '" + q
                + "' in vhost '/' of queue type rabbit_stream_queue");
        }
    }

    @Test
    void badValuesAreRefusedWithRabbitMqsWords() throws Exception {
        String q = name("values");
        String prefix = "invalid arg '%s' for queue '" + q + "' in vhost '/': ";
        refused(q, true, false, false, stream("x-max-age", "10X"), prefix.formatted("x-max-age") + "invalid_max_age");
        refused(q, true, false, false, stream("x-max-age", "0s"), prefix.formatted("x-max-age") + "invalid_max_age");
        refused(q, true, false, false, stream("x-max-age", 10), prefix.formatted("x-max-age")
            + "{unacceptable_type,signedint}");
        refused(q, true, false, false, stream("x-max-length-bytes", -1), prefix.formatted("x-max-length-bytes")
            + "{value_negative,-1}");
        refused(q, true, false, false, stream("x-stream-max-segment-size-bytes", "big"),
            prefix.formatted("x-stream-max-segment-size-bytes") + "\"expected integer, got longstr\"");
        refused(q, true, false, false, stream("x-initial-cluster-size", 0), prefix.formatted("x-initial-cluster-size")
            + "{value_zero,0}");
        refused(q, true, false, false, stream("x-queue-leader-locator", "nearest"),
            prefix.formatted("x-queue-leader-locator") + "invalid_queue_locator_arg");
        refused(q, true, false, false, stream("x-stream-filter-size-bytes", 15),
            "Invalid value for x-stream-filter-size-bytes");
        refused(q, true, false, false, stream("x-stream-filter-size-bytes", 256),
            "Invalid value for x-stream-filter-size-bytes");
        refused(q, true, false, false, stream("x-stream-max-segment-size-bytes", 3_000_000_001L),
            "Exceeded max value for x-stream-max-segment-size-bytes");
    }

    @Test
    void consumingNeedsAPrefetchManualAcksAndNoChannelWideLimit() throws Exception {
        String q = name("consume");
        channel.queueDeclare(q, true, false, false, stream());
        String queue = "queue '" + q + "' in vhost '/'";
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - consumer prefetch count is not set "
            + "for stream " + queue, () -> channel.basicConsume(q, false, new Amqp091Support.Recorder(channel)));

        Connection autoAck = target.factory().newConnection();
        Channel c = autoAck.createChannel();
        c.basicQos(10);
        connectionError(autoAck, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - automatic acknowledgement not supported by "
            + "stream " + queue, () -> c.basicConsume(q, true, new Amqp091Support.Recorder(c)));

        Connection global = target.factory().newConnection();
        Channel g = global.createChannel();
        g.basicQos(10, false);
        g.basicQos(100, true);
        connectionError(global, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - " + queue + " does not support global qos",
            () -> g.basicConsume(q, false, new Amqp091Support.Recorder(g)));
    }

    @Test
    void consumerArgumentsAreCheckedFirst() throws Exception {
        String q = name("consumer-args");
        channel.queueDeclare(q, true, false, false, stream());
        channel.basicQos(10);
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-stream-offset' for "
            + "queue '" + q + "' in vhost '/': {invalid_stream_offset_arg,{longstr,<<\"soon\">>}}",
            () -> channel.basicConsume(q, false, Map.of("x-stream-offset", "soon"),
                new Amqp091Support.Recorder(channel)));
        channel = connection.createChannel();
        channel.basicQos(10);
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-priority' for queue '"
            + q + "' in vhost '/' of queue type rabbit_stream_queue",
            () -> channel.basicConsume(q, false, Map.of("x-priority", 5), new Amqp091Support.Recorder(channel)));
    }

    @Test
    void getAndPurgeAreNotImplementedForStreams() throws Exception {
        String q = name("get-purge");
        channel.queueDeclare(q, true, false, false, stream());
        Amqp091Support.sendToQueue(connection, q, "kept");
        String queue = "queue '" + q + "' in vhost '/'";
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - basic.get not supported by stream queues "
            + queue, () -> channel.basicGet(q, false));

        Connection purging = target.factory().newConnection();
        Channel c = purging.createChannel();
        connectionError(purging, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - queue.purge not supported by stream queues "
            + queue, () -> c.queuePurge(q));
        try (Connection after = target.factory().newConnection()) {
            assertThat(Amqp091Support.passive(after, q).getMessageCount()).as("nothing purged").isEqualTo(1);
        }
    }

    @Test
    void deleteRemovesTheStreamAndSaysHowManyMessagesItHad() throws Exception {
        String q = name("delete");
        channel.queueDeclare(q, true, false, false, stream());
        channel.confirmSelect();
        for (int i = 0; i < 3; i++) {
            channel.basicPublish("", q, null, bytes("m" + i));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(channel.queueDelete(q).getMessageCount()).isEqualTo(3);
        assertThat(queueExists(connection, q)).isFalse();
        channel.queueDeclare(q, true, false, false, stream());
        assertThat(channel.queueDeclarePassive(q).getMessageCount()).as("a new stream, empty").isZero();
    }
}
