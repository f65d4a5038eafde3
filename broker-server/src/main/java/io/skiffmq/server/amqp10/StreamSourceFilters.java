package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.core.queue.StreamArguments;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamQueue;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;

/**
 * RabbitMQ's stream source filters, read as RabbitMQ 4 reads them ({@code rabbit_amqp_session:parse_filters/3}):
 * known by their descriptor, whatever their key; a value of another type is not taken, and so not echoed.
 *
 * <ul>
 * <li>{@code rabbitmq:stream-offset-spec}: a timestamp (ms, read to the second as RabbitMQ passes it on in
 * seconds), a string or symbol ({@code first}, {@code last}, {@code next} or an interval such as {@code 10m}), or an
 * integer offset of at least 0;</li>
 * <li>{@code rabbitmq:stream-filter}: a string, or a list whose strings are the values (other elements ignored);</li>
 * <li>{@code rabbitmq:stream-match-unfiltered}: a boolean.</li>
 * </ul>
 *
 * They become the stream consumer's arguments by way of the 0-9-1 consumer arguments they stand for
 * ({@code x-stream-offset}, {@code x-stream-filter}, {@code x-stream-match-unfiltered}), as RabbitMQ turns them
 * into those; the first of a kind counts. Made and used on the connection's event loop.
 */
final class StreamSourceFilters {
    static final Symbol OFFSET_SPEC = Symbol.valueOf("rabbitmq:stream-offset-spec");
    static final Symbol FILTER = Symbol.valueOf("rabbitmq:stream-filter");
    static final Symbol MATCH_UNFILTERED = Symbol.valueOf("rabbitmq:stream-match-unfiltered");

    /** The 0-9-1 consumer arguments they stand for, in the forms {@link StreamConsumerArguments} reads. */
    private final Map<String, Object> arguments = new HashMap<>(4);

    /**
     * Takes a described filter if it is one of these with a value of the right type.
     *
     * @return whether it was taken (and is so honoured on a stream, and echoed)
     */
    boolean take(Object descriptor, Object value) {
        String argument;
        Object converted;
        if (OFFSET_SPEC.equals(descriptor)) {
            argument = StreamConsumerArguments.OFFSET;
            converted = offset(value);
        } else if (FILTER.equals(descriptor)) {
            argument = StreamConsumerArguments.FILTER;
            converted = filter(value);
        } else if (MATCH_UNFILTERED.equals(descriptor)) {
            argument = StreamConsumerArguments.MATCH_UNFILTERED;
            converted = value instanceof Boolean ? value : null;
        } else {
            return false;
        }
        if (converted == null) {
            return false;
        }
        arguments.putIfAbsent(argument, converted);
        return true;
    }

    private static Object offset(Object value) {
        if (value instanceof Date timestamp) {
            // RabbitMQ hands it on as a 0-9-1 timestamp, in seconds
            return Instant.ofEpochSecond(Math.floorDiv(timestamp.getTime(), 1000));
        }
        if (value instanceof String || value instanceof Symbol) {
            return value.toString();
        }
        long offset;
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            offset = ((Number) value).longValue();
        } else if (value instanceof UnsignedLong u) {
            offset = u.longValue() < 0 ? Long.MAX_VALUE : u.longValue(); // past 2^63: far beyond the end all the same
        } else if (value instanceof UnsignedInteger || value instanceof UnsignedShort
                || value instanceof UnsignedByte) {
            offset = ((Number) value).longValue();
        } else {
            return null;
        }
        return offset >= 0 ? offset : null;
    }

    private static Object filter(Object value) {
        if (value instanceof String) {
            return value;
        }
        if (value instanceof List<?> list) {
            List<String> values = new ArrayList<>();
            for (Object element : list) {
                if (element instanceof String text) {
                    values.add(text);
                }
            }
            return values;
        }
        if (value instanceof Object[] array) { // an AMQP array
            return filter(List.of(array));
        }
        return null;
    }

    /**
     * The arguments of a consumer of {@code stream}.
     *
     * @throws AmqpException {@code amqp:precondition-failed} for an interval that is none, in RabbitMQ's words
     */
    StreamConsumerArguments consumerArguments(long handle, StreamQueue stream, String vhost) {
        if (arguments.get(StreamConsumerArguments.OFFSET) instanceof String spec && !spec.equals("first")
                && !spec.equals("last") && !spec.equals("next") && StreamArguments.maxAge(spec) < 0) {
            // rabbit_stream_queue:consume/3's refusal of what parse_offset_arg/1 cannot read
            throw AmqpException.linkError(handle, AmqpError.PRECONDITION_FAILED,
                "failed consuming from stream queue '%s' in vhost '%s': invalid_max_age", stream.name(), vhost);
        }
        return stream.consumerArguments(arguments);
    }
}
