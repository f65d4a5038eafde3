package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Over AMQP 1.0 (the RabbitMQ AMQP 1.0 client's {@code priority}), a quorum queue's single active consumer gives
 * way to one of higher priority once its deliveries are settled, as RabbitMQ 4.0's {@code rabbit_fifo} hands over.
 */
class QuorumQueueSingleActiveConsumerTest extends Amqp10ClientTestBase {
    @Test
    void aHigherPriorityConsumerTakesOverOnceTheActiveOneHasSettled() throws Exception {
        String q = unique("qq-sac-amqp10");
        management().queue().name(q).type(Management.QueueType.QUORUM).singleActiveConsumer(true).declare();
        published(publisher(q), "m1");
        published(publisher(q), "m2");
        BlockingQueue<Consumer.Context> lowContexts = new LinkedBlockingQueue<>();
        BlockingQueue<Message> low = new LinkedBlockingQueue<>();
        Consumer first = connection.consumerBuilder().queue(q).priority(0).initialCredits(1).messageHandler((context, message) -> {
            low.add(message);
            lowContexts.add(context); // settled later, by the test
        }).build();
        closeAfter.add(first);
        Message m1 = low.poll(10, TimeUnit.SECONDS);
        assertThat(text(m1)).isEqualTo("m1");
        BlockingQueue<Message> high = new LinkedBlockingQueue<>();
        consumer(q, high, (context, message) -> context.accept(), 10);
        assertThat(high.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS)).as("not before m1 is settled").isNull();
        lowContexts.take().accept();
        Message m2 = high.poll(10, TimeUnit.SECONDS);
        assertThat(m2).isNotNull();
        assertThat(text(m2)).isEqualTo("m2");
        assertThat(low).as("nothing more to the first").isEmpty();
    }

    private void consumer(String queue, BlockingQueue<Message> seen, Consumer.MessageHandler handler,
            int priority) {
        Consumer consumer = connection.consumerBuilder().queue(queue).priority(priority)
            .messageHandler((context, message) -> {
                seen.add(message);
                handler.handle(context, message);
            }).build();
        closeAfter.add(consumer);
    }
}
