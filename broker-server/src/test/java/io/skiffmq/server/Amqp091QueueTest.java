package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.passive;
import static io.skiffmq.server.Amqp091Support.publishConfirmed;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Queues: server-named, passive, durable, exclusive (405 to others) and auto-delete; equivalence (406); the
 * counts in declare-ok; bind and unbind; purge; delete with if-unused and if-empty. Queues another connection must
 * see are durable and deleted after the test (an external broker keeps them).
 */
class Amqp091QueueTest extends Amqp091ClientTest {
    private final List<String> queues = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        if (connection.isOpen()) {
            connection.close();
        }
        try (Connection cleaner = target.factory().newConnection()) {
            Channel c = cleaner.createChannel();
            for (String queue : queues) {
                c.queueDelete(queue);
            }
        }
    }

    /** A unique durable queue, deleted after the test. */
    private String durableQueue(String prefix) throws Exception {
        String name = unique(prefix);
        queues.add(name);
        AMQP.Queue.DeclareOk ok = channel.queueDeclare(name, true, false, false, null);
        assertThat(ok.getQueue()).isEqualTo(name);
        return name;
    }

    @Test
    void aServerNamedQueueIsExclusiveAndCalledAmqGen() throws Exception {
        AMQP.Queue.DeclareOk ok = channel.queueDeclare();
        assertThat(ok.getQueue()).startsWith("amq.gen-").hasSizeGreaterThan("amq.gen-".length());
        assertThat(ok.getMessageCount()).isZero();
        assertThat(ok.getConsumerCount()).isZero();
        String other = channel.queueDeclare("", false, true, true, null).getQueue();
        assertThat(other).startsWith("amq.gen-").isNotEqualTo(ok.getQueue());
        try (Connection second = target.factory().newConnection()) {
            Channel c = second.createChannel();
            channelError(c, AMQP.RESOURCE_LOCKED,
                "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue '" + ok.getQueue() + "' in vhost '/'",
                () -> c.queueDeclarePassive(ok.getQueue()));
        }
    }

    @Test
    void aServerNamedQueueNeedNotBeExclusive() throws Exception {
        String name = channel.queueDeclare("", true, false, false, null).getQueue();
        queues.add(name);
        assertThat(name).startsWith("amq.gen-");
        try (Connection second = target.factory().newConnection()) {
            assertThat(second.createChannel().queueDeclarePassive(name).getQueue()).isEqualTo(name);
        }
    }

    @Test
    void amqNamesAreReserved() throws Exception {
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - queue name 'amq.mine' contains reserved prefix 'amq.*'",
            () -> channel.queueDeclare("amq.mine", false, true, false, null));
    }

    @Test
    void declareOkCountsReadyMessagesAndConsumersExactly() throws Exception {
        String queue = durableQueue("counts");
        sendToQueue(connection, queue, "m1", "m2", "m3");
        AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive(queue);
        assertThat(ok.getMessageCount()).isEqualTo(3);
        assertThat(ok.getConsumerCount()).isZero();
        // an equivalent active declare reports the same
        ok = channel.queueDeclare(queue, true, false, false, null);
        assertThat(ok.getMessageCount()).isEqualTo(3);

        // a message taken and not acknowledged is not ready: not counted
        GetResponse taken = channel.basicGet(queue, false);
        assertThat(taken.getMessageCount()).as("get-ok's count: the messages left").isEqualTo(2);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(2);
        channel.basicReject(taken.getEnvelope().getDeliveryTag(), true);
        // settling is asynchronous: not even the same channel's next method is sure to see the requeue
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(queue).getMessageCount() == 3);
        assertThat(channel.messageCount(queue)).isEqualTo(3);
        channel.queuePurge(queue);

        // consumers, each on a channel of its own
        Channel c1 = connection.createChannel();
        Channel c2 = connection.createChannel();
        String tag1 = c1.basicConsume(queue, false, new Recorder(c1));
        c2.basicConsume(queue, false, new Recorder(c2));
        assertThat(channel.queueDeclarePassive(queue).getConsumerCount()).isEqualTo(2);
        assertThat(channel.consumerCount(queue)).isEqualTo(2);
        c1.basicCancel(tag1);
        assertThat(channel.queueDeclarePassive(queue).getConsumerCount()).isEqualTo(1);
        c2.close();
        // a closed channel's consumers go as the queue hears of it, possibly just after close-ok
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(queue).getConsumerCount() == 0);
    }

    @Test
    void passiveDeclareOfAMissingQueueIsNotFound() throws Exception {
        String missing = unique("missing");
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + missing + "' in vhost '/'",
            () -> channel.queueDeclarePassive(missing));
    }

    @Test
    void redeclaringWithOtherFlagsIsPreconditionFailed() throws Exception {
        String queue = durableQueue("reflag");
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'durable' for queue '" + queue + "' in vhost '/': "
                + "received 'false' but current is 'true'",
            () -> channel.queueDeclare(queue, false, false, false, null));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'auto_delete' for queue '" + queue + "' in vhost '/': "
                + "received 'true' but current is 'false'",
            () -> channel.queueDeclare(queue, true, false, true, null));
    }

    @Test
    void redeclaringWithAnotherQueueTypeIsPreconditionFailed() throws Exception {
        String queue = unique("retype");
        queues.add(queue);
        channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "classic"));
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue '" + queue + "' in vhost '/'",
            () -> channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum")));
        channel = connection.createChannel();
        // RabbitMQ compares only the arguments it knows (rabbit_amqqueue:declare_args/0 and the queue type's)
        channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "classic", "x-custom", "anything"));
        // a passive declare takes no flags or arguments, so nothing to compare
        channel.queueDeclarePassive(queue);
    }

    @Test
    void anExclusiveQueueIsLockedToOtherConnectionsAndGoesWithItsOwn() throws Exception {
        String queue = unique("exclusive");
        channel.queueDeclare(queue, false, true, false, null);
        channel.queueBind(queue, "amq.direct", queue);
        String locked = "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue '" + queue + "' in vhost '/'";
        try (Connection other = target.factory().newConnection()) {
            Channel c = other.createChannel();
            channelError(c, AMQP.RESOURCE_LOCKED, locked, () -> c.queueDeclarePassive(queue));
            Channel c2 = other.createChannel();
            channelError(c2, AMQP.RESOURCE_LOCKED, locked, () -> c2.queueDeclare(queue, false, true, false, null));
            Channel c3 = other.createChannel();
            channelError(c3, AMQP.RESOURCE_LOCKED, locked, () -> c3.basicConsume(queue, new Recorder(c3)));
            Channel c4 = other.createChannel();
            channelError(c4, AMQP.RESOURCE_LOCKED, locked, () -> c4.basicGet(queue, true));
            Channel c5 = other.createChannel();
            channelError(c5, AMQP.RESOURCE_LOCKED, locked, () -> c5.queuePurge(queue));
            Channel c6 = other.createChannel();
            channelError(c6, AMQP.RESOURCE_LOCKED, locked, () -> c6.queueDelete(queue));
            // but anyone may publish to it
            publishConfirmed(other, "amq.direct", queue, null, "from another connection");
            assertThat(text(channel.basicGet(queue, true).getBody())).isEqualTo("from another connection");

            // another channel of the owning connection may use it
            Channel mine = connection.createChannel();
            assertThat(mine.queueDeclarePassive(queue).getQueue()).isEqualTo(queue);

            connection.close();
            await().atMost(TIMEOUT).until(() -> !queueExists(other, queue));
        }
    }

    @Test
    void anAutoDeleteQueueGoesWithItsLastConsumerNotBefore() throws Exception {
        String queue = unique("auto");
        queues.add(queue);
        channel.queueDeclare(queue, true, false, true, null);
        assertThat(queueExists(connection, queue)).as("never consumed: stays").isTrue();
        Channel c1 = connection.createChannel();
        Channel c2 = connection.createChannel();
        String tag1 = c1.basicConsume(queue, true, new Recorder(c1));
        String tag2 = c2.basicConsume(queue, true, new Recorder(c2));
        c1.basicCancel(tag1);
        assertThat(queueExists(connection, queue)).as("one consumer left").isTrue();
        c2.basicCancel(tag2);
        await().atMost(TIMEOUT).until(() -> !queueExists(connection, queue));
    }

    @Test
    void anAutoDeleteQueueGoesWhenItsConsumersChannelCloses() throws Exception {
        String queue = unique("auto-close");
        queues.add(queue);
        channel.queueDeclare(queue, true, false, true, null);
        Channel consumer = connection.createChannel();
        consumer.basicConsume(queue, true, new Recorder(consumer));
        consumer.close();
        await().atMost(TIMEOUT).until(() -> !queueExists(connection, queue));
    }

    /** RabbitMQ 4.0-4.2 (and 3.x) permit transient non-exclusive queues; 4.3 denies them by default. */
    @Test
    void aTransientNonExclusiveQueueIsSharedBetweenConnections() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(
            target.external() && !Amqp091Support.externalOlderThan(target, 4, 3),
            "RabbitMQ 4.3 denies transient non-exclusive queues by default");
        String queue = unique("transient");
        queues.add(queue);
        channel.queueDeclare(queue, false, false, false, null);
        try (Connection other = target.factory().newConnection()) {
            sendToQueue(other, queue, "shared");
        }
        assertThat(text(channel.basicGet(queue, true).getBody())).isEqualTo("shared");
    }

    @Test
    void bindAndUnbindChangeWhatIsRouted() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.queueBind(queue, "amq.direct", "k1");
        channel.queueBind(queue, "amq.direct", "k1"); // binding twice is one binding
        channel.queueBind(queue, "amq.topic", "t.#");
        publishConfirmed(connection, "amq.direct", "k1", null, "direct");
        publishConfirmed(connection, "amq.topic", "t.x.y", null, "topic");
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(2);

        channel.queueUnbind(queue, "amq.direct", "k1");
        publishConfirmed(connection, "amq.direct", "k1", null, "not routed");
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(2);
        // unbinding what is not bound is fine
        channel.queueUnbind(queue, "amq.direct", "k1");
        channel.queueUnbind(queue, "amq.direct", "never-bound");
        assertThat(channel.isOpen()).isTrue();
        // the default exchange binds every queue by its name, with no declared binding
        publishConfirmed(connection, "", queue, null, "by name");
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(3);
    }

    @Test
    void anotherConnectionCannotUnbindAnExclusiveQueue() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.queueBind(queue, "amq.direct", "k");
        try (Connection second = target.factory().newConnection()) {
            Channel other = second.createChannel();
            // what is not bound is no business of the queue's: unbind-ok, as RabbitMQ checks only a binding there
            other.queueUnbind(queue, "amq.direct", "never-bound");
            channelError(other, AMQP.RESOURCE_LOCKED, "RESOURCE_LOCKED - cannot obtain exclusive access to locked "
                + "queue '" + queue + "' in vhost '/'. It could be originally declared on another connection or "
                + "the exclusive property value does not match that of the original declaration.",
                () -> other.queueUnbind(queue, "amq.direct", "k"));
        }
        publishConfirmed(connection, "amq.direct", "k", null, "still bound");
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
        channel.queueUnbind(queue, "amq.direct", "k"); // its own connection may
        publishConfirmed(connection, "amq.direct", "k", null, "not routed");
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
    }

    @Test
    void bindingAMissingQueueIsNotFound() throws Exception {
        String missing = unique("missing");
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + missing + "' in vhost '/'",
            () -> channel.queueBind(missing, "amq.direct", "k"));
    }

    @Test
    void purgeReturnsTheCountAndLeavesUnackedMessages() throws Exception {
        String queue = durableQueue("purge");
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4");
        Channel holder = connection.createChannel();
        GetResponse held = holder.basicGet(queue, false);
        assertThat(text(held.getBody())).isEqualTo("m1");
        assertThat(channel.queuePurge(queue).getMessageCount()).isEqualTo(3);
        assertThat(channel.queuePurge(queue).getMessageCount()).isZero();
        holder.basicNack(held.getEnvelope().getDeliveryTag(), false, true);
        // the held one, back (settling is asynchronous)
        await().atMost(TIMEOUT).until(() -> holder.queueDeclarePassive(queue).getMessageCount() == 1);
        String missing = unique("missing");
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + missing + "' in vhost '/'",
            () -> channel.queuePurge(missing));
    }

    @Test
    void deleteReturnsTheMessageCount() throws Exception {
        String queue = durableQueue("delete");
        sendToQueue(connection, queue, "m1", "m2");
        assertThat(channel.queueDelete(queue).getMessageCount()).isEqualTo(2);
        assertThat(queueExists(connection, queue)).isFalse();
        // deleting a queue that is not there is not an error
        assertThat(channel.queueDelete(queue).getMessageCount()).isZero();
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void deleteIfUnusedRefusesAQueueWithConsumers() throws Exception {
        String queue = durableQueue("if-unused");
        Channel consumer = connection.createChannel();
        String tag = consumer.basicConsume(queue, true, new Recorder(consumer));
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - queue '" + queue + "' in vhost '/' in use",
            () -> channel.queueDelete(queue, true, false));
        consumer.basicCancel(tag);
        channel = connection.createChannel();
        assertThat(channel.queueDelete(queue, true, false).getMessageCount()).isZero();
        assertThat(queueExists(connection, queue)).isFalse();
    }

    @Test
    void deleteIfEmptyRefusesAQueueWithMessages() throws Exception {
        String queue = durableQueue("if-empty");
        sendToQueue(connection, queue, "m1");
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - queue '" + queue + "' in vhost '/' not empty",
            () -> channel.queueDelete(queue, false, true));
        channel = connection.createChannel();
        channel.queuePurge(queue);
        assertThat(channel.queueDelete(queue, false, true).getMessageCount()).isZero();
    }

    @Test
    void deleteIfEmptyCountsOnlyReadyMessages() throws Exception {
        String queue = durableQueue("if-empty-unacked");
        sendToQueue(connection, queue, "m1");
        Channel holder = connection.createChannel();
        assertThat(holder.basicGet(queue, false)).isNotNull();
        // the only message is unacknowledged: the queue is "empty" for if-empty
        assertThat(channel.queueDelete(queue, false, true).getMessageCount()).isZero();
        assertThat(queueExists(connection, queue)).isFalse();
    }

    @Test
    void aDeletedQueueIsNoLongerRouted() throws Exception {
        String queue = durableQueue("unrouted");
        channel.queueBind(queue, "amq.fanout", "");
        channel.queueDelete(queue);
        Channel publisher = connection.createChannel();
        List<Integer> returns = new java.util.concurrent.CopyOnWriteArrayList<>();
        publisher.addReturnListener(r -> returns.add(r.getReplyCode()));
        publisher.confirmSelect();
        publisher.basicPublish("", queue, true, null, bytes("to a deleted queue"));
        publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(returns).containsExactly(AMQP.NO_ROUTE);
    }
}
