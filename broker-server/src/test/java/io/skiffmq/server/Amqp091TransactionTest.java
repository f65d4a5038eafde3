package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.passive;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Return;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Transactions ({@code tx.select}, {@code commit}, {@code rollback}) for publishes (routed at commit, dropped at
 * rollback, returned at commit) and for acks, nacks and rejects (done at commit, undone at rollback, checked when
 * they come: a tag the transaction settled already is unknown, and {@code basic.recover} leaves it); commit and
 * rollback without select (406).
 */
class Amqp091TransactionTest extends Amqp091ClientTest {
    private String queue;

    @BeforeEach
    void setUp() throws Exception {
        queue = channel.queueDeclare("", false, true, false, null).getQueue();
    }

    private int ready() throws Exception {
        return passive(connection, queue).getMessageCount();
    }

    /** Consumes the queue with manual acks until exactly {@code count} deliveries came. */
    private Recorder consume(int count) throws Exception {
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(count);
        return consumer;
    }

    @Test
    void publishesAreRoutedAtCommitOnly() throws Exception {
        channel.txSelect();
        channel.basicPublish("", queue, null, bytes("m1"));
        channel.basicPublish("", queue, null, bytes("m2"));
        channel.basicPublish("", queue, null, bytes("m3"));
        // a synchronous method on the same channel: the broker has read the publishes, and holds them
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
        assertThat(ready()).isZero();
        channel.txCommit();
        assertThat(ready()).isEqualTo(3);
        // the channel stays transactional: the next publishes wait for the next commit
        channel.basicPublish("", queue, null, bytes("m4"));
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(3);
        channel.txCommit();
        assertThat(ready()).isEqualTo(4);
    }

    @Test
    void rollbackDropsThePublishes() throws Exception {
        channel.txSelect();
        channel.basicPublish("", queue, null, bytes("dropped 1"));
        channel.basicPublish("", queue, null, bytes("dropped 2"));
        channel.txRollback();
        assertThat(ready()).isZero();
        channel.basicPublish("", queue, null, bytes("kept"));
        channel.txCommit();
        assertThat(ready()).isEqualTo(1);
        assertThat(Amqp091Support.text(channel.basicGet(queue, true).getBody())).isEqualTo("kept");
    }

    @Test
    void aMandatoryUnroutablePublishIsReturnedAtCommit() throws Exception {
        List<Return> returns = new CopyOnWriteArrayList<>();
        channel.addReturnListener(returns::add);
        channel.txSelect();
        channel.basicPublish("amq.direct", "no-binding", true, null, bytes("returned"));
        channel.queueDeclarePassive(queue);
        assertThat(returns).as("nothing routed yet, so nothing returned").isEmpty();
        channel.txCommit();
        // the return goes out before commit-ok, and the client reads frames in order
        assertThat(returns).singleElement().satisfies(r -> {
            assertThat(r.getReplyCode()).isEqualTo(AMQP.NO_ROUTE);
            assertThat(Amqp091Support.text(r.getBody())).isEqualTo("returned");
        });
    }

    @Test
    void acksTakeEffectAtCommit() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consume(3);
        channel.txSelect();
        channel.basicAck(3, true);
        channel.txCommit();
        channel.close();
        // acked: nothing comes back, not even a little later
        await().during(QUIET).atMost(TIMEOUT).until(() -> ready() == 0);
    }

    @Test
    void uncommittedAcksAreForgottenWhenTheChannelCloses() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consume(3);
        channel.txSelect();
        channel.basicAck(3, true);
        channel.close();
        await().atMost(TIMEOUT).until(() -> ready() == 3);
    }

    @Test
    void rollbackKeepsAckedMessagesUnacked() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consume(3);
        channel.txSelect();
        channel.basicAck(2, false);
        channel.txRollback();
        // the tags are still the channel's: acking them again is no unknown-tag error
        channel.basicAck(1, false);
        channel.basicAck(2, false);
        channel.txCommit();
        assertThat(channel.isOpen()).isTrue();
        channel.close();
        await().atMost(TIMEOUT).until(() -> ready() == 1); // m3: never acked
    }

    @Test
    void rejectsAndNacksTakeEffectAtCommit() throws Exception {
        sendToQueue(connection, queue, "m1", "m2");
        Recorder consumer = consume(2);
        channel.txSelect();
        channel.basicReject(1, true);
        channel.basicNack(2, false, false);
        await().during(QUIET).atMost(TIMEOUT).until(() -> consumer.deliveries.size() == 2);
        channel.txCommit();
        consumer.awaitExactly(3);
        assertThat(Amqp091Support.text(consumer.deliveries.get(2).getBody())).isEqualTo("m1");
        assertThat(consumer.deliveries.get(2).getEnvelope().isRedeliver()).isTrue();
    }

    /** rabbit_channel takes an acked tag out of the unacked ones at once, transaction or not. */
    @Test
    void aSecondAckOfATagInATransactionIsPreconditionFailedAtOnce() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consume(3);
        channel.txSelect();
        channel.basicAck(2, false);
        channel.basicAck(3, true); // 1 and 3: 2 is the transaction's already
        channel.basicAck(3, false);
        Amqp091Support.awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - unknown delivery tag 3");
        await().atMost(TIMEOUT).until(() -> ready() == 3); // never committed: all back
    }

    @Test
    void aNackOrRejectOfATagTheTransactionAckedIsPreconditionFailedToo() throws Exception {
        sendToQueue(connection, queue, "m1");
        consume(1);
        channel.txSelect();
        channel.basicNack(1, false, true);
        channel.basicReject(1, false);
        Amqp091Support.awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - unknown delivery tag 1");
    }

    /**
     * The Java client's own suite ({@code Transactions.redeliverAckedUncommitted}): an ack the transaction holds
     * takes the delivery out of the unacked ones, so {@code basic.recover} leaves it, as rabbit_channel does; the
     * others are redelivered.
     */
    @Test
    void recoverInATransactionRedeliversOnlyWhatNoAckOfItHolds() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        channel.txSelect();
        for (int i = 1; i <= 3; i++) {
            assertThat(Amqp091Support.text(channel.basicGet(queue, false).getBody())).isEqualTo("m" + i);
        }
        channel.basicAck(2, false);
        channel.basicRecover(true);
        com.rabbitmq.client.GetResponse first = channel.basicGet(queue, true);
        com.rabbitmq.client.GetResponse second = channel.basicGet(queue, true);
        assertThat(List.of(Amqp091Support.text(first.getBody()), Amqp091Support.text(second.getBody())))
            .containsExactly("m1", "m3");
        assertThat(first.getEnvelope().isRedeliver()).isTrue();
        assertThat(channel.basicGet(queue, true)).as("acked, uncommitted: not redelivered").isNull();
        channel.txCommit();
        channel.close();
        await().during(QUIET).atMost(TIMEOUT).until(() -> ready() == 0);
    }

    /** A commit settles the held acks and nothing between them: a range of tags never covers an unacked one. */
    @Test
    void aCommitSettlesExactlyTheHeldDeliveries() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5", "m6");
        consume(6);
        channel.txSelect();
        channel.basicAck(2, false);
        channel.basicAck(4, false);
        channel.basicNack(5, false, false);
        channel.basicAck(6, false);
        channel.txRollback();
        channel.basicAck(1, false);
        channel.basicAck(2, false);
        channel.basicNack(4, false, false);
        channel.basicAck(6, false);
        channel.txCommit();
        channel.close();
        await().atMost(TIMEOUT).until(() -> ready() == 2);
        assertThat(Amqp091Support.text(connection.createChannel().basicGet(queue, true).getBody())).isEqualTo("m3");
    }

    @Test
    void selectTwiceAndEmptyCommitsAreFine() throws Exception {
        channel.txSelect();
        channel.txSelect();
        channel.txCommit();
        channel.txRollback();
        channel.txCommit();
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void commitOrRollbackWithoutSelectIsPreconditionFailed() throws Exception {
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - channel is not transactional",
            channel::txCommit);
        Channel other = connection.createChannel();
        channelError(other, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - channel is not transactional",
            other::txRollback);
    }
}
