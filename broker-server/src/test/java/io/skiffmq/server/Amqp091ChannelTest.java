package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Command;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Channels: open and close, the numbers the client picks, {@code channel.flow}, many channels on one connection,
 * and a channel error that closes its channel only.
 */
@ExtendWith(LeakDetection.class)
class Amqp091ChannelTest {
    private static Amqp091Target target;
    private Connection connection;

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    @BeforeEach
    void connect() throws Exception {
        connection = target.factory().newConnection();
    }

    @AfterEach
    void disconnect() throws Exception {
        if (connection.isOpen()) {
            connection.close();
        }
    }

    @Test
    void aChannelOpensClosesAndItsNumberCanBeUsedAgain() throws Exception {
        Channel channel = connection.createChannel(5);
        assertThat(channel.getChannelNumber()).isEqualTo(5);
        assertThat(channel.isOpen()).isTrue();
        String queue = channel.queueDeclare().getQueue();
        channel.close();
        assertThat(channel.isOpen()).isFalse();
        assertThat(connection.isOpen()).isTrue();

        Channel again = connection.createChannel(5);
        assertThat(again.getChannelNumber()).isEqualTo(5);
        // the exclusive queue belongs to the connection, not to the channel that declared it
        assertThat(again.queueDeclarePassive(queue).getQueue()).isEqualTo(queue);
        again.close();
    }

    @Test
    void flowActiveIsAcknowledged() throws Exception {
        Channel channel = connection.createChannel();
        Command reply = channel.rpc(new AMQP.Channel.Flow.Builder().active(true).build());
        assertThat(reply.getMethod()).isInstanceOfSatisfying(AMQP.Channel.FlowOk.class,
            ok -> assertThat(ok.getActive()).isTrue());
        assertThat(channel.queueDeclare().getQueue()).startsWith("amq.gen-");
    }

    @Test
    void flowInactiveIsNotImplemented() throws Exception {
        Channel channel = connection.createChannel();
        // rabbit_channel: channel.flow{active = false} is not_implemented, a connection exception
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - active=false",
            () -> channel.rpc(new AMQP.Channel.Flow.Builder().active(false).build()));
    }

    @Test
    void manyChannelsWorkSideBySide() throws Exception {
        List<Channel> channels = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            channels.add(connection.createChannel());
        }
        String queue = channels.get(0).queueDeclare().getQueue();
        for (int i = 0; i < channels.size(); i++) {
            channels.get(i).basicPublish("", queue, null, bytes("from " + i));
        }
        List<String> got = new ArrayList<>();
        for (Channel channel : channels) {
            // each channel's publish is in the queue before its own get (one channel's methods are in order)
            GetResponse response = channel.basicGet(queue, true);
            assertThat(response).isNotNull();
            got.add(text(response.getBody()));
        }
        assertThat(got).hasSize(100).doesNotHaveDuplicates().allMatch(body -> body.startsWith("from "));
        assertThat(channels.get(0).basicGet(queue, true)).isNull();
        for (Channel channel : channels) {
            channel.close();
        }
        assertThat(connection.isOpen()).isTrue();
    }

    @Test
    void aChannelErrorClosesThatChannelOnly() throws Exception {
        Channel failing = connection.createChannel();
        Channel bystander = connection.createChannel();
        String queue = bystander.queueDeclare().getQueue();
        try (Connection other = target.factory().newConnection()) {
            Channel otherChannel = other.createChannel();

            channelError(failing, AMQP.NOT_FOUND, "NOT_FOUND - no queue 'missing-queue' in vhost '/'",
                () -> failing.queueDeclarePassive("missing-queue"));

            assertThat(bystander.isOpen()).isTrue();
            bystander.basicPublish("", queue, null, bytes("still here"));
            assertThat(text(bystander.basicGet(queue, true).getBody())).isEqualTo("still here");
            Channel fresh = connection.createChannel();
            assertThat(fresh.queueDeclarePassive(queue).getQueue()).isEqualTo(queue);
            assertThat(otherChannel.queueDeclare().getQueue()).startsWith("amq.gen-");
        }
    }

    @Test
    void theNumberOfAChannelClosedByAnErrorCanBeOpenedAgain() throws Exception {
        Channel failing = connection.createChannel(7);
        channelError(failing, AMQP.NOT_FOUND, "NOT_FOUND - no exchange 'missing-exchange' in vhost '/'",
            () -> failing.exchangeDeclarePassive("missing-exchange"));
        Channel again = connection.createChannel(7);
        assertThat(again.queueDeclare().getQueue()).startsWith("amq.gen-");
    }

    @Test
    void aConnectionErrorClosesEveryChannel() throws Exception {
        Channel first = connection.createChannel();
        Channel second = connection.createChannel();
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - prefetch_size!=0 (1)",
            () -> first.basicQos(1, 0, false));
        assertThat(first.isOpen()).isFalse();
        // The client wakes the failed RPC before its main loop has shut the other channels down.
        await().atMost(Duration.ofSeconds(10)).until(() -> !second.isOpen());
    }
}
