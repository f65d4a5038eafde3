package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Declaring queues with {@code x-} arguments: a bad value or an argument of another queue type is 406 with RabbitMQ's
 * text ({@code rabbit_amqqueue:check_declare_arguments/3}, {@code rabbit_channel}'s dead-letter exchange check) and
 * creates nothing; a redeclaration with another value is 406 (equivalence) (streams: {@link Amqp091StreamTest};
 * quorum queues: {@link Amqp091QuorumQueueTest}).
 */
class Amqp091QueueArgumentsTest extends Amqp091ArgumentsTestBase {

    /** Declares {@code name} with one argument and expects 406 with {@code detail} after RabbitMQ's prefix. */
    private void refused(String name, String key, Object value, String detail) throws Exception {
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg '" + key + "' for queue '"
                + name + "' in vhost '/'" + detail,
            () -> channel.queueDeclare(name, false, false, false, Map.of(key, value)));
        assertThat(queueExists(connection, name)).as("nothing declared for " + key + "=" + value).isFalse();
    }

    @Test
    void valuesOutOfRangeAreRefused() throws Exception {
        String q = queueName("range");
        refused(q, "x-max-length", -1, ": {value_negative,-1}");
        refused(q, "x-max-length-bytes", -5L, ": {value_negative,-5}");
        refused(q, "x-message-ttl", -1, ": {value_negative,-1}");
        refused(q, "x-message-ttl", 315_360_000_001L, ": {value_too_large,315360000001}");
        refused(q, "x-expires", 0, ": {value_zero,0}");
        refused(q, "x-expires", -1, ": {value_negative,-1}");
        refused(q, "x-max-priority", 256, ": {max_value_exceeded,256}");
        refused(q, "x-max-priority", -1, ": {value_negative,-1}");
    }

    @Test
    void valuesOfTheWrongTypeAreRefused() throws Exception {
        String q = queueName("type");
        // an integer argument's type error is a formatted string, printed with ~p: quoted
        refused(q, "x-max-length", "ten", ": \"expected integer, got longstr\"");
        refused(q, "x-message-ttl", 1.5d, ": \"expected integer, got double\"");
        refused(q, "x-single-active-consumer", "yes", ": {unacceptable_type,longstr}");
        refused(q, "x-overflow", 1, ": {unacceptable_type,signedint}");
        refused(q, "x-overflow", "drop-tail", ": invalid_overflow");
        refused(q, "x-dead-letter-routing-key", 5, ": {unacceptable_type,signedint}");
        refused(q, "x-queue-type", "fast", ": \"unsupported queue type 'fast'\"");
        refused(q, "x-queue-mode", "fast", ": \"unsupported queue mode 'fast'\"");
        refused(q, "x-queue-version", 3, ": \"unsupported queue version '3'\"");
    }

    @Test
    void aDeadLetterExchangeThatIsNoStringIsRefusedByTheChannel() throws Exception {
        String q = queueName("dlx-type");
        // rabbit_channel checks the exchange's name before the queue's arguments, in its own words
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid type 'signedint' for arg "
                + "'x-dead-letter-exchange' in queue '" + q + "' in vhost '/'",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-dead-letter-exchange", 5)));
        assertThat(queueExists(connection, q)).isFalse();
    }

    @Test
    void aDeadLetterRoutingKeyNeedsADeadLetterExchange() throws Exception {
        String q = queueName("dlrk");
        refused(q, "x-dead-letter-routing-key", "somewhere", ": routing_key_but_no_dlx_defined");
        channel = connection.createChannel();
        channel.queueDeclare(q, false, false, false, Map.of("x-dead-letter-routing-key", "somewhere",
            "x-dead-letter-exchange", ""));
        assertThat(queueExists(connection, q)).isTrue();
    }

    @Test
    void argumentsOfOtherQueueTypesAreRefusedForAClassicQueue() throws Exception {
        String q = queueName("other-type");
        for (Map.Entry<String, Object> argument : Map.<String, Object>of("x-max-age", "1D",
                "x-dead-letter-strategy", "at-least-once", "x-quorum-initial-group-size", 3,
                "x-stream-max-segment-size-bytes", 1000).entrySet()) {
            refused(q, argument.getKey(), argument.getValue(), " of queue type rabbit_classic_queue");
        }
        // the same with x-queue-type classic said out loud
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-max-age' for queue '"
                + q + "' in vhost '/' of queue type rabbit_classic_queue",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-queue-type", "classic", "x-max-age", "1D")));
    }

    @Test
    void ofSeveralBadArgumentsTheOneRabbitMqChecksFirstIsNamed() throws Exception {
        // rabbit_amqqueue:check_declare_arguments/3: values in declare_args/0's order, then other queue types' keys
        String q = queueName("order");
        Map<String, Map<String, Object>> firstNamed = new java.util.LinkedHashMap<>();
        firstNamed.put("x-dead-letter-routing-key", Map.of("x-max-length", -1, "x-dead-letter-routing-key", "k"));
        firstNamed.put("x-max-length", Map.of("x-max-length", -1, "x-max-age", "1D"));
        firstNamed.put("x-message-ttl", Map.of("x-max-priority", 300, "x-message-ttl", -1));
        firstNamed.put("x-overflow", Map.of("x-single-active-consumer", 1, "x-overflow", "none"));
        for (Map.Entry<String, Map<String, Object>> declaration : firstNamed.entrySet()) {
            channel = connection.createChannel();
            channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg '"
                    + declaration.getKey() + "' for queue '" + q + "' in vhost '/'",
                () -> channel.queueDeclare(q, false, false, false, declaration.getValue()));
        }
    }

    @Test
    void argumentsRabbitMqDoesNotKnowAreAcceptedAndIgnored() throws Exception {
        String q = queue("custom", "x-my-tag", "blue", "not-even-x", 1);
        assertThat(queueExists(connection, q)).isTrue();
    }

    @Test
    void everyClassicArgumentWithAGoodValueIsAccepted() throws Exception {
        String q = queue("all", "x-max-length", 10, "x-max-length-bytes", 1000L, "x-overflow", "reject-publish-dlx",
            "x-message-ttl", 60_000, "x-expires", 600_000, "x-dead-letter-exchange", "amq.direct",
            "x-dead-letter-routing-key", "dead", "x-max-priority", 10, "x-single-active-consumer", true,
            "x-queue-type", "classic");
        assertThat(queueExists(connection, q)).isTrue();
    }

    @Test
    void everyLeaderLocatorRabbitMq4AcceptsIsAcceptedAndOthersAreRefused() throws Exception {
        // rabbit_queue_location:queue_leader_locators/0: the last three are deprecated names for balanced
        for (String locator : List.of("client-local", "balanced", "random", "least-leaders", "min-masters")) {
            String q = queue("locator", "x-queue-leader-locator", locator);
            assertThat(queueExists(connection, q)).as(locator).isTrue();
        }
        String q = queueName("bad-locator");
        refused(q, "x-queue-leader-locator", "nearest", ": invalid_queue_locator_arg");
        refused(q, "x-queue-leader-locator", 1, ": {unacceptable_type,signedint}");
    }

    @Test
    void redeclaringWithAnotherArgumentValueIsPreconditionFailed() throws Exception {
        String q = queue("equivalence", "x-max-length", 10, "x-message-ttl", 60_000);
        String prefix = "PRECONDITION_FAILED - inequivalent arg 'x-max-length' for queue '" + q + "' in vhost '/': ";
        // rabbit_misc:assert_args_equivalence1/4: the type is named only when one side has no value
        channelError(channel, AMQP.PRECONDITION_FAILED, prefix + "received '20' but current is '10'",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-max-length", 20, "x-message-ttl", 60_000)));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, prefix + "received none but current is the value '10' of "
                + "type 'signedint'",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-message-ttl", 60_000)));
        channel = connection.createChannel();
        // an int and a long of one value are equivalent; arguments RabbitMQ does not compare may differ
        AMQP.Queue.DeclareOk ok = channel.queueDeclare(q, false, false, false,
            Map.of("x-max-length", 10L, "x-message-ttl", 60_000, "x-anything", "else"));
        assertThat(ok.getQueue()).isEqualTo(q);
        // an invalid value for an existing queue: the equivalence check answers first
        channelError(channel, AMQP.PRECONDITION_FAILED, prefix + "received '-1' but current is '10'",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-max-length", -1, "x-message-ttl", 60_000)));
    }

    @Test
    void redeclaringWithAnotherSelectorOrNoLocalIsPreconditionFailed() throws Exception {
        Assumptions.assumeFalse(target.external(), "x-selector and x-no-local are SkiffMQ's own arguments");
        String q = queue("filters", "x-selector", "colour = 'red'", "x-no-local", true);
        String prefix = "PRECONDITION_FAILED - inequivalent arg '%s' for queue '" + q + "' in vhost '/': ";
        channelError(channel, AMQP.PRECONDITION_FAILED, prefix.formatted("x-selector")
                + "received 'colour = 'blue'' but current is 'colour = 'red''",
            () -> channel.queueDeclare(q, false, false, false,
                Map.of("x-selector", "colour = 'blue'", "x-no-local", true)));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, prefix.formatted("x-no-local")
                + "received none but current is the value 'true' of type 'bool'",
            () -> channel.queueDeclare(q, false, false, false, Map.of("x-selector", "colour = 'red'")));
        channel = connection.createChannel();
        AMQP.Queue.DeclareOk ok = channel.queueDeclare(q, false, false, false,
            Map.of("x-selector", "colour = 'red'", "x-no-local", true));
        assertThat(ok.getQueue()).isEqualTo(q);
    }
}
