package io.skiffmq.core.stream;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.StreamArguments;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A stream consumer's arguments (0-9-1 {@code basic.consume}), read as RabbitMQ 4 reads them
 * ({@code rabbit_stream_queue:parse_offset_arg/1} and {@code filter_spec/1}, checked by
 * {@code rabbit_amqqueue:check_consume_arguments/3}):
 *
 * <ul>
 *   <li>{@code x-stream-offset}: {@code "first"}, {@code "last"}, {@code "next"} (the default), an offset (an
 *       integer), a timestamp (AMQP timestamp, seconds) or an interval back from now ({@code "10m"}, units as
 *       {@code x-max-age});</li>
 *   <li>{@code x-stream-filter}: a string or an array of strings (other elements are ignored);</li>
 *   <li>{@code x-stream-match-unfiltered}: a boolean, read only with a filter.</li>
 * </ul>
 *
 * The arguments other queue types take ({@code x-priority}) are refused. Stateless.
 *
 * @param filter null when the consumer takes every chunk
 */
public record StreamConsumerArguments(StreamOffset offset, StreamFilterSpec filter) {
    public static final String OFFSET = "x-stream-offset";
    public static final String FILTER = "x-stream-filter";
    public static final String MATCH_UNFILTERED = "x-stream-match-unfiltered";

    /**
     * @param now the broker's time, for an interval
     * @throws BrokerException PRECONDITION_FAILED in RabbitMQ's words
     */
    public static StreamConsumerArguments of(String vhost, String queue, Map<String, Object> arguments, long now) {
        StreamOffset offset = StreamOffset.next();
        Object value = arguments.get(OFFSET);
        if (value != null) {
            offset = offset(value, now);
            if (offset == null) {
                throw new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + OFFSET + "' for queue '"
                    + queue + "' in vhost '" + vhost + "': {invalid_stream_offset_arg,{"
                    + HeaderValues.fieldType(value) + "," + erlang(value) + "}}");
            }
        }
        QueueType.STREAM.checkConsumerArguments(vhost, queue, arguments);
        return new StreamConsumerArguments(offset, filter(arguments));
    }

    /** The offset specification {@code value} says, or null when it says none. */
    private static StreamOffset offset(Object value, long now) {
        if (value instanceof String text) {
            switch (text) {
                case "first":
                    return StreamOffset.first();
                case "last":
                    return StreamOffset.last();
                case "next":
                    return StreamOffset.next();
                default:
                    long interval = StreamArguments.maxAge(text);
                    return interval < 0 ? null : StreamOffset.timestamp(now - interval);
            }
        }
        if (value instanceof Instant at) {
            return StreamOffset.timestamp(at.getEpochSecond() * 1000);
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            // a negative offset is before the first one: from the first
            return StreamOffset.offset(Math.max(0, ((Number) value).longValue()));
        }
        return null;
    }

    private static StreamFilterSpec filter(Map<String, Object> arguments) {
        Object value = arguments.get(FILTER);
        List<String> values = new ArrayList<>();
        if (value instanceof String text) {
            values.add(text);
        } else if (value instanceof List<?> list) {
            for (Object element : list) {
                if (element instanceof String text) {
                    values.add(text);
                }
            }
        }
        if (values.isEmpty()) {
            return null;
        }
        return new StreamFilterSpec(values, Boolean.TRUE.equals(arguments.get(MATCH_UNFILTERED)));
    }

    /** As Erlang's {@code ~p} prints the value in a refusal. */
    private static String erlang(Object value) {
        return value instanceof String text ? "<<\"" + text + "\">>" : String.valueOf(value);
    }
}
