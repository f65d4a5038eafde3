package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Envelope;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Direct reply-to ({@code amq.rabbitmq.reply-to}), as RabbitMQ's rabbit_channel handles it: a requester consumes
 * the pseudo-queue without acks, publishes requests with {@code reply_to} set to it, and the responder, seeing a
 * per-channel {@code amq.rabbitmq.reply-to.*} name instead, replies to that name through the default exchange.
 */
@ExtendWith(LeakDetection.class)
class Amqp091DirectReplyToTest {
    private static final String REPLY_TO = "amq.rabbitmq.reply-to";
    private static Amqp091Target target;
    private Connection requester;
    private Connection responder;
    private String requests;

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
        requester = target.factory().newConnection();
        responder = target.factory().newConnection();
        requests = unique("requests");
        responder.createChannel().queueDeclare(requests, false, true, false, null);
    }

    @AfterEach
    void disconnect() throws Exception {
        for (Connection c : List.of(requester, responder)) {
            if (c.isOpen()) {
                c.close();
            }
        }
    }

    /** A responder on the request queue that answers each request to its reply-to, with the body upper-cased. */
    private List<Delivery> startResponder() throws Exception {
        Channel channel = responder.createChannel();
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        channel.basicConsume(requests, true, new DefaultConsumer(channel) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                    throws java.io.IOException {
                seen.add(new Delivery(envelope, properties, body));
                AMQP.BasicProperties reply = new AMQP.BasicProperties.Builder()
                    .correlationId(properties.getCorrelationId()).build();
                channel.basicPublish("", properties.getReplyTo(), reply, bytes(text(body).toUpperCase()));
            }
        });
        return seen;
    }

    @Test
    void aRequestIsAnsweredThroughTheReplyToPseudoQueue() throws Exception {
        List<Delivery> seenByResponder = startResponder();
        Channel channel = requester.createChannel();
        Recorder replies = new Recorder(channel);
        String tag = channel.basicConsume(REPLY_TO, true, replies);
        assertThat(tag).startsWith("amq.ctag-");
        for (int i = 1; i <= 3; i++) {
            channel.basicPublish("", requests, new AMQP.BasicProperties.Builder().replyTo(REPLY_TO)
                .correlationId("c" + i).build(), bytes("ping " + i));
        }
        replies.awaitExactly(3);
        assertThat(replies.bodies()).containsExactly("PING 1", "PING 2", "PING 3");
        assertThat(replies.deliveries).extracting(d -> d.getProperties().getCorrelationId())
            .containsExactly("c1", "c2", "c3");
        assertThat(seenByResponder).hasSize(3);
        String replyTo = seenByResponder.get(0).getProperties().getReplyTo();
        assertThat(replyTo).startsWith(REPLY_TO + ".");
        assertThat(seenByResponder).allSatisfy(d -> assertThat(d.getProperties().getReplyTo()).isEqualTo(replyTo));
        Envelope envelope = replies.deliveries.get(0).getEnvelope();
        assertThat(envelope.getExchange()).isEmpty();
        assertThat(envelope.getRoutingKey()).isEqualTo(replyTo);
    }

    @Test
    void thePseudoQueueExistsForPassiveDeclares() throws Exception {
        Channel channel = requester.createChannel();
        // rabbit_channel: "all declares to these are effectively passive. If it exists it by definition has one
        // consumer"; the bare name always exists
        AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive(REPLY_TO);
        assertThat(ok.getQueue()).isEqualTo(REPLY_TO);
        assertThat(ok.getMessageCount()).isZero();
        assertThat(ok.getConsumerCount()).isEqualTo(1);
    }

    @Test
    void aResponderCanCheckThatTheRequesterIsStillThere() throws Exception {
        List<Delivery> seen = startResponder();
        Channel channel = requester.createChannel();
        channel.basicConsume(REPLY_TO, true, new Recorder(channel));
        channel.basicPublish("", requests, new AMQP.BasicProperties.Builder().replyTo(REPLY_TO).build(),
            bytes("ping"));
        await().atMost(TIMEOUT).until(() -> seen.size() == 1);
        String replyTo = seen.get(0).getProperties().getReplyTo();
        Channel check = responder.createChannel();
        AMQP.Queue.DeclareOk ok = check.queueDeclarePassive(replyTo);
        assertThat(ok.getQueue()).isEqualTo(replyTo);
        assertThat(ok.getConsumerCount()).isEqualTo(1);

        channel.close();
        channelError(check, AMQP.NOT_FOUND, "NOT_FOUND - no queue '" + replyTo + "' in vhost '/'",
            () -> check.queueDeclarePassive(replyTo));
    }

    @Test
    void consumingWithAcksIsPreconditionFailed() throws Exception {
        Channel channel = requester.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - reply consumer cannot acknowledge",
            () -> channel.basicConsume(REPLY_TO, false, new Recorder(channel)));
    }

    @Test
    void aSecondReplyConsumerOnAChannelIsPreconditionFailed() throws Exception {
        Channel channel = requester.createChannel();
        channel.basicConsume(REPLY_TO, true, new Recorder(channel));
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - reply consumer already set",
            () -> channel.basicConsume(REPLY_TO, true, new Recorder(channel)));
        // another channel may have its own
        Channel other = requester.createChannel();
        other.basicConsume(REPLY_TO, true, new Recorder(other));
    }

    @Test
    void publishingWithReplyToWithoutAReplyConsumerOnTheChannelIsPreconditionFailed() throws Exception {
        Channel consuming = requester.createChannel();
        consuming.basicConsume(REPLY_TO, true, new Recorder(consuming));
        Channel publishing = requester.createChannel(); // not the consuming one
        publishing.basicPublish("", requests, new AMQP.BasicProperties.Builder().replyTo(REPLY_TO).build(),
            bytes("who answers?"));
        awaitChannelError(publishing, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - fast reply consumer does not exist");
    }

    @Test
    void cancellingTheReplyConsumerEndsIt() throws Exception {
        Channel channel = requester.createChannel();
        Recorder replies = new Recorder(channel);
        String tag = channel.basicConsume(REPLY_TO, true, replies);
        channel.basicCancel(tag);
        await().atMost(TIMEOUT).until(() -> replies.cancelOks.size() == 1);
        assertThat(replies.cancelOks).containsExactly(tag);
        // and a new one may start on the same channel
        channel.basicConsume(REPLY_TO, true, new Recorder(channel));
        assertThat(channel.isOpen()).isTrue();
    }
}
