package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.ByteCapacity;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Queue arguments through AMQP 1.0 with RabbitMQ's own client: declared through its management API (409 for an
 * invalid or inequivalent argument; quorum queues as RabbitMQ 4.0 has them), reject-publish as the publisher's
 * {@code rejected}, {@code x-delivery-limit} (counted by {@code modified(delivery-failed)}, not by {@code released}),
 * consumer priority ({@code rabbitmq:priority}) and {@code x-confirm-after-consume}.
 */
class Amqp10QueueArgumentsTest extends Amqp10ClientTestBase {

    @Test
    void theManagementApiDeclaresAClassicQueueWithItsArguments() {
        String q = unique("declared");
        Management.QueueInfo info = management().queue().name(q).maxLength(10).maxLengthBytes(ByteCapacity.kB(1))
            .overflowStrategy(Management.OverflowStrategy.REJECT_PUBLISH_DLX).messageTtl(Duration.ofMinutes(1))
            .expires(Duration.ofHours(1)).deadLetterExchange("amq.direct").deadLetterRoutingKey("dead")
            .singleActiveConsumer(true).classic().maxPriority(5).queue().argument("x-delivery-limit", 3).declare();
        assertThat(info.name()).isEqualTo(q);
        assertThat(info.type()).isEqualTo(Management.QueueType.CLASSIC);
        Map<String, Object> arguments = management().queueInfo(q).arguments();
        assertThat(arguments).containsEntry("x-max-length", 10L).containsEntry("x-max-length-bytes", 1000L)
            .containsEntry("x-overflow", "reject-publish-dlx").containsEntry("x-message-ttl", 60_000L)
            .containsEntry("x-expires", 3_600_000L).containsEntry("x-dead-letter-exchange", "amq.direct")
            .containsEntry("x-dead-letter-routing-key", "dead").containsEntry("x-single-active-consumer", true)
            .containsEntry("x-max-priority", 5).containsEntry("x-delivery-limit", 3);
        management().queueDelete(q);
    }

    @Test
    void anInvalidOrInequivalentArgumentIs409WithRabbitMqsText() {
        String q = unique("checked");
        assertThatThrownBy(() -> management().queue().name(q).argument("x-max-length", -1).declare())
            .hasMessageContaining("409")
            .hasMessageContaining("invalid arg 'x-max-length' for queue '" + q + "' in vhost '/': {value_negative,-1}");
        assertThatThrownBy(() -> management().queue().name(q).argument("x-max-age", "1D").declare())
            .hasMessageContaining("409")
            .hasMessageContaining("invalid arg 'x-max-age' for queue '" + q + "' in vhost '/' of queue type "
                + "rabbit_classic_queue");
        assertThatThrownBy(() -> management().queueInfo(q)).as("nothing declared").isInstanceOf(RuntimeException.class);

        management().queue().name(q).maxLength(10).declare();
        assertThatThrownBy(() -> management().queue().name(q).maxLength(20).declare()).hasMessageContaining("409");
        assertThatThrownBy(() -> management().queue().name(q).declare()).hasMessageContaining("409");
        management().queue().name(q).maxLength(10).declare(); // the same again: fine
        management().queueDelete(q);
    }

    @Test
    void theManagementApiTakesEveryLeaderLocatorRabbitMq4Accepts() {
        // as an argument: the client's leaderLocator() sets the deprecated x-queue-master-locator for a classic queue
        String q = unique("located");
        for (String locator : List.of("client-local", "balanced", "random", "least-leaders")) {
            management().queue().name(q).argument("x-queue-leader-locator", locator).declare();
            assertThat(management().queueInfo(q).arguments()).containsEntry("x-queue-leader-locator", locator);
            management().queueDelete(q);
        }
        assertThatThrownBy(() -> management().queue().name(q).argument("x-queue-leader-locator", "nearest")
                .declare())
            .hasMessageContaining("409")
            .hasMessageContaining("invalid arg 'x-queue-leader-locator' for queue '" + q + "' in vhost '/': "
                + "invalid_queue_locator_arg");
    }

    @Test
    void theClientsQuorumQueueIsDeclaredAndShownAsQuorum() {
        String q = unique("quorum");
        Management.QueueInfo info = management().queue().name(q).quorum().deliveryLimit(3).initialMemberCount(3)
            .deadLetterStrategy(Management.QuorumQueueDeadLetterStrategy.AT_MOST_ONCE).queue().declare();
        assertThat(info.type()).isEqualTo(Management.QueueType.QUORUM);
        Management.QueueInfo read = management().queueInfo(q);
        assertThat(read.type()).isEqualTo(Management.QueueType.QUORUM);
        assertThat(read.durable()).isTrue();
        assertThat(read.leader()).isNotEmpty();
        assertThat(read.members()).containsExactly(read.leader());
        assertThat(read.arguments()).containsEntry("x-queue-type", "quorum").containsEntry("x-delivery-limit", 3)
            .containsEntry("x-quorum-initial-group-size", 3);
        // the same again is fine; another delivery limit is inequivalent
        management().queue().name(q).quorum().deliveryLimit(3).initialMemberCount(3)
            .deadLetterStrategy(Management.QuorumQueueDeadLetterStrategy.AT_MOST_ONCE).queue().declare();
        assertThatThrownBy(() -> management().queue().name(q).quorum().deliveryLimit(4).initialMemberCount(3)
                .deadLetterStrategy(Management.QuorumQueueDeadLetterStrategy.AT_MOST_ONCE).queue().declare())
            .hasMessageContaining("409");
        assertThatThrownBy(() -> management().queue().name(unique("quorum")).quorum().queue()
                .argument("x-max-priority", 5).declare())
            .hasMessageContaining("409").hasMessageContaining("of queue type rabbit_quorum_queue");
        management().queueDelete(q);
    }

    @Test
    void aQueueThatRefusesAMessageGivesThePublisherRejected() throws Exception {
        String q = unique("reject");
        management().queue().name(q).maxLength(1).overflowStrategy(Management.OverflowStrategy.REJECT_PUBLISH)
            .declare();
        Publisher publisher = publisher(q);
        assertThat(published(publisher, "fits")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(published(publisher, "does not fit")).isEqualTo(Publisher.Status.REJECTED);
        assertThat(management().queueInfo(q).messageCount()).isEqualTo(1);

        String[] names = queueWithDeadLetterQueue("reject-dlx", Map.of("x-max-length", 1,
            "x-overflow", "reject-publish-dlx"));
        Publisher dlx = publisher(names[0]);
        assertThat(published(dlx, "fits")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(published(dlx, "dead-lettered")).isEqualTo(Publisher.Status.REJECTED);
        Message dead = next(names[1]);
        assertThat(text(dead)).isEqualTo("dead-lettered");
        assertDeath(((Object[]) dead.annotation("x-opt-deaths"))[0], names[0], "maxlen", 1, "", List.of(names[0]), -1,
            time.millis(), time.millis());
    }

    @Test
    void releasedDoesNotCountTowardsTheDeliveryLimitButModifiedFailedDoes() throws Exception {
        String[] names = queueWithDeadLetterQueue("limited", Map.of("x-delivery-limit", 1));
        Publisher publisher = publisher(names[0]);
        assertThat(published(publisher, "poison")).isEqualTo(Publisher.Status.ACCEPTED);
        List<Long> deliveryCounts = new CopyOnWriteArrayList<>();
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(names[0], seen, (context, message) -> {
            deliveryCounts.add(message.deliveryCount());
            if (deliveryCounts.size() <= 3) {
                context.requeue(); // released: not the consumer's failure
            } else {
                context.requeue(Map.of(), true); // modified, delivery-failed
            }
        });
        Message dead = next(names[1]);
        assertThat(deliveryCounts).containsExactly(0L, 0L, 0L, 0L, 1L);
        assertDeath(((Object[]) dead.annotation("x-opt-deaths"))[0], names[0], "delivery_limit", 1, "",
            List.of(names[0]), -1, time.millis(), time.millis());
        Amqp091Support.await().during(QUIET).atMost(QUIET.plus(Amqp091Support.TIMEOUT))
            .until(() -> deliveryCounts.size() == 5);
    }


    /**
     * A quorum queue counts every return, {@code released} too, as RabbitMQ 4.0's {@code acquired_count}: the
     * redeliveries carry it as the {@code x-delivery-count} annotation and the delivery limit counts it, while the
     * header's delivery-count stays at the failed deliveries (none here).
     */
    @Test
    void aQuorumQueueAnnotatesAndLimitsEveryReturn() throws Exception {
        String[] names = queueWithDeadLetterQueue("quorum-limited", Map.of("x-queue-type", "quorum",
            "x-delivery-limit", 2));
        Publisher publisher = publisher(names[0]);
        assertThat(published(publisher, "poison")).isEqualTo(Publisher.Status.ACCEPTED);
        List<Object> annotations = new CopyOnWriteArrayList<>();
        List<Long> deliveryCounts = new CopyOnWriteArrayList<>();
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(names[0], seen, (context, message) -> {
            annotations.add(message.hasAnnotation("x-delivery-count") ? message.annotation("x-delivery-count")
                : "none");
            deliveryCounts.add(message.deliveryCount());
            context.requeue(); // released
        });
        Message dead = next(names[1]);
        assertThat(annotations).containsExactly("none", 1L, 2L);
        assertThat(deliveryCounts).containsExactly(0L, 0L, 0L);
        assertDeath(((Object[]) dead.annotation("x-opt-deaths"))[0], names[0], "delivery_limit", 1, "",
            List.of(names[0]), -1, time.millis(), time.millis());
    }

    @Test
    void theConsumerOfHighestPriorityWithCreditIsServedFirst() throws Exception {
        String q = unique("consumer-priorities");
        management().queue().name(q).declare();
        BlockingQueue<Message> toLow = new LinkedBlockingQueue<>();
        BlockingQueue<Message> toHigh = new LinkedBlockingQueue<>();
        Consumer low = connection.consumerBuilder().queue(q).priority(0).messageHandler((context, message) -> {
            toLow.add(message);
            context.accept();
        }).build();
        closeAfter.add(low);
        Consumer high = connection.consumerBuilder().queue(q).priority(10).messageHandler((context, message) -> {
            toHigh.add(message);
            context.accept();
        }).build();
        closeAfter.add(high);
        Publisher publisher = publisher(q);
        for (int i = 1; i <= 3; i++) {
            assertThat(published(publisher, "m" + i)).isEqualTo(Publisher.Status.ACCEPTED);
        }
        for (int i = 1; i <= 3; i++) {
            assertThat(text(toHigh.poll(10, TimeUnit.SECONDS))).isEqualTo("m" + i);
        }
        assertThat(toLow).isEmpty();
        // without credit the high one is passed over
        high.pause();
        assertThat(published(publisher, "m4")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(text(toLow.poll(10, TimeUnit.SECONDS))).isEqualTo("m4");
        assertThat(toHigh.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void confirmAfterConsumeHoldsThePublishersOutcomeUntilAConsumerSettles() throws Exception {
        String q = unique("after-consume");
        management().queue().name(q).argument("x-confirm-after-consume", true).declare();
        Publisher publisher = publisher(q);
        BlockingQueue<Publisher.Status> accepted = publish(publisher, publisher.message(bytes("accept me")));
        BlockingQueue<Publisher.Status> rejected = publish(publisher, publisher.message(bytes("discard me")));
        assertThat(accepted.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS)).as("unsettled until consumed").isNull();
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(q, seen, (context, message) -> {
            if (text(message).equals("accept me")) {
                context.accept();
            } else {
                context.discard();
            }
        });
        assertThat(accepted.poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(rejected.poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.REJECTED);
    }
}
