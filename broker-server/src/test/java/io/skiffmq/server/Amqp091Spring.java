package io.skiffmq.server;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory.ConfirmType;

/**
 * What the Spring AMQP tests share: a {@link CachingConnectionFactory} on an {@link Amqp091Target} (built on the
 * target's RabbitMQ client factory, as a Spring application builds one), names unique to a run (the tests also
 * run against a long-lived RabbitMQ), and counts read outside Spring with a plain client connection.
 */
final class Amqp091Spring {
    private Amqp091Spring() {
    }

    /** A Spring connection factory for the target; {@code confirms} NONE, SIMPLE or CORRELATED. */
    static CachingConnectionFactory connectionFactory(Amqp091Target target, ConfirmType confirms, boolean returns) {
        CachingConnectionFactory factory = new CachingConnectionFactory(target.factory());
        factory.setPublisherConfirmType(confirms);
        factory.setPublisherReturns(returns);
        return factory;
    }

    /** {@code prefix} plus a random suffix, so runs against the same broker never meet. */
    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * A passive declare on a fresh connection of its own: {@code [ready messages, consumers]}. Messages a closed
     * Spring connection left unacknowledged are counted as ready again, so this tells acknowledged from not.
     */
    static int[] counts(Amqp091Target target, String queue) throws IOException, TimeoutException {
        try (Connection connection = target.factory().newConnection("counts");
            Channel channel = connection.createChannel()) {
            com.rabbitmq.client.AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive(queue);
            return new int[] {ok.getMessageCount(), ok.getConsumerCount()};
        }
    }

    /** Deletes queues and exchanges a test made, on a fresh connection; missing ones are fine. */
    static void deleteQueuesAndExchanges(Amqp091Target target, Iterable<String> queues, Iterable<String> exchanges)
        throws IOException, TimeoutException {
        try (Connection connection = target.factory().newConnection("cleanup")) {
            // queue.delete and exchange.delete of a missing name succeed; any other failure closes only its channel
            for (String queue : queues) {
                try (Channel channel = connection.createChannel()) {
                    channel.queueDelete(queue);
                } catch (IOException e) {
                    // gone with its channel
                }
            }
            for (String exchange : exchanges) {
                try (Channel channel = connection.createChannel()) {
                    channel.exchangeDelete(exchange);
                } catch (IOException e) {
                    // gone with its channel
                }
            }
        }
    }
}
