package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.drain;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Arguments RabbitMQ checks, refused with its code and text: {@code x-priority} on {@code basic.consume} must be an
 * integer ({@code rabbit_amqqueue:check_consume_arguments/3}); {@code x-match} on a binding from a headers exchange
 * must be {@code all}, {@code any}, {@code all-with-x} or {@code any-with-x}
 * ({@code rabbit_exchange_type_headers:validate_binding/2}); a void value is a value of type {@code void}, not no
 * value, for queue and exchange arguments as for these.
 */
class Amqp091ArgumentChecksTest extends Amqp091ClientTest {

    /** One argument, its value possibly null (void), which Map.of refuses. */
    private static Map<String, Object> arg(String key, Object value) {
        Map<String, Object> map = new HashMap<>();
        map.put(key, value);
        return map;
    }

    private String queue() throws Exception {
        return channel.queueDeclare(unique("checks"), false, true, false, null).getQueue();
    }

    @Test
    void anXPriorityThatIsNoIntegerIsRefused() throws Exception {
        String q = queue();
        for (Object bad : new Object[] {null, "5", 1.5d, true}) {
            String type = bad == null ? "void" : bad instanceof String ? "longstr" : bad instanceof Double ? "double"
                : "bool";
            channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-priority' for queue '"
                    + q + "' in vhost '/': \"expected integer, got " + type + "\"",
                () -> channel.basicConsume(q, true, arg("x-priority", bad), (tag, d) -> { }, tag -> { }));
            channel = connection.createChannel();
        }
        for (Object good : new Object[] {5, 5L, (short) 5, (byte) 5, -3}) {
            String tag = channel.basicConsume(q, true, arg("x-priority", good), (t, d) -> { }, t -> { });
            channel.basicCancel(tag);
        }
    }

    @Test
    void anXMatchOtherThanTheFourModesIsRefusedOnAHeadersExchange() throws Exception {
        String q = queue();
        String headers = unique("checks-headers");
        channel.exchangeDeclare(headers, BuiltinExchangeType.HEADERS, false, true, null);
        String other = unique("checks-other");
        channel.exchangeDeclare(other, BuiltinExchangeType.FANOUT, false, true, null);
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - Invalid x-match field value "
                + "<<\"some\">>; expected all, any, all-with-x, or any-with-x",
            () -> channel.queueBind(q, headers, "", arg("x-match", "some")));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - Invalid x-match field type void "
                + "(value undefined); expected longstr",
            () -> channel.queueBind(q, headers, "", arg("x-match", null)));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - Invalid x-match field type "
                + "signedint (value 5); expected longstr",
            () -> channel.exchangeBind(other, headers, "", arg("x-match", 5)));
        channel = connection.createChannel();
        // only a headers exchange reads x-match
        channel.queueBind(q, other, "", arg("x-match", "some"));
        for (String mode : List.of("all", "any", "all-with-x", "any-with-x")) {
            channel.queueBind(q, headers, "", arg("x-match", mode));
        }
    }

    @Test
    void theWithXModesMatchXHeadersToo() throws Exception {
        String headers = unique("checks-withx");
        channel.exchangeDeclare(headers, BuiltinExchangeType.HEADERS, false, true, null);
        Map<String, String> queues = new HashMap<>();
        for (String mode : List.of("all", "any", "all-with-x", "any-with-x")) {
            String q = queue();
            queues.put(mode, q);
            Map<String, Object> arguments = arg("x-match", mode);
            arguments.put("x-tenant", "blue");
            arguments.put("kind", "order");
            channel.queueBind(q, headers, "", arguments);
        }
        channel.confirmSelect();
        publish(headers, Map.of("x-tenant", "blue", "kind", "order"), "both");
        publish(headers, Map.of("x-tenant", "blue"), "x only");
        publish(headers, Map.of("kind", "order"), "kind only");
        publish(headers, Map.of("x-tenant", "red", "kind", "order"), "other tenant");
        channel.waitForConfirmsOrDie(5_000);
        // without -with-x the x- arguments are ignored; with it they must match like any other
        assertThat(drain(channel, queues.get("all"))).containsExactly("both", "kind only", "other tenant");
        assertThat(drain(channel, queues.get("any"))).containsExactly("both", "kind only", "other tenant");
        assertThat(drain(channel, queues.get("all-with-x"))).containsExactly("both");
        assertThat(drain(channel, queues.get("any-with-x")))
            .containsExactly("both", "x only", "kind only", "other tenant");
    }

    @Test
    void voidValuesOfCheckedQueueArgumentsAreRefused() throws Exception {
        String q = unique("checks-void");
        for (String key : List.of("x-message-ttl", "x-max-length", "x-expires")) {
            channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg '" + key
                    + "' for queue '" + q + "' in vhost '/': \"expected integer, got void\"",
                () -> channel.queueDeclare(q, false, false, true, arg(key, null)));
            channel = connection.createChannel();
        }
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-single-active-consumer'"
                + " for queue '" + q + "' in vhost '/': {unacceptable_type,void}",
            () -> channel.queueDeclare(q, false, false, true, arg("x-single-active-consumer", null)));
        channel = connection.createChannel();
        // rabbit_channel's own check of the dead-letter exchange's name
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid type 'void' for arg "
                + "'x-dead-letter-exchange' in queue '" + q + "' in vhost '/'",
            () -> channel.queueDeclare(q, false, false, true, arg("x-dead-letter-exchange", null)));
        channel = connection.createChannel();
        assertThat(queueExists(connection, q)).isFalse();
    }

    @Test
    void aVoidArgumentIsNotNoArgumentWhenRedeclaring() throws Exception {
        String q = unique("checks-redeclare");
        channel.queueDeclare(q, false, false, true, arg("x-queue-mode", null));
        channel.queueDeclare(q, false, false, true, arg("x-queue-mode", null));
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'x-queue-mode' for "
                + "queue '" + q + "' in vhost '/': received none but current is the value 'undefined' of type 'void'",
            () -> channel.queueDeclare(q, false, false, true, null));
    }

    @Test
    void aVoidAlternateExchangeIsRefusedForANewExchange() throws Exception {
        String x = unique("checks-ae");
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid type 'void' for arg "
                + "'alternate-exchange' in exchange '" + x + "' in vhost '/'",
            () -> channel.exchangeDeclare(x, BuiltinExchangeType.FANOUT, false, true, arg("alternate-exchange", null)));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid type 'signedint' for arg "
                + "'alternate-exchange' in exchange '" + x + "' in vhost '/'",
            () -> channel.exchangeDeclare(x, BuiltinExchangeType.FANOUT, false, true, arg("alternate-exchange", 5)));
        channel = connection.createChannel();
        channel.exchangeDeclare(x, BuiltinExchangeType.FANOUT, false, false, null);
        // an existing exchange compares it instead (rabbit_exchange:assert_args_equivalence/2)
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'alternate-exchange' "
                + "for exchange '" + x + "' in vhost '/': received the value 'undefined' of type 'void' but current "
                + "is none",
            () -> channel.exchangeDeclare(x, BuiltinExchangeType.FANOUT, false, false,
                arg("alternate-exchange", null)));
        channel = connection.createChannel();
        channel.exchangeDelete(x);
    }

    private void publish(String exchange, Map<String, Object> headers, String body) throws Exception {
        channel.basicPublish(exchange, "", new AMQP.BasicProperties.Builder().headers(headers).build(), bytes(body));
    }
}
