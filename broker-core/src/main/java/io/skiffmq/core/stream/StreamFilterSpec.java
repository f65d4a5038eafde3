package io.skiffmq.core.stream;

import java.util.List;

/**
 * What a filtering stream consumer asks for: the filter values it wants (0-9-1's {@code x-stream-filter}, the stream
 * protocol's {@code filter.N}, AMQP 1.0's {@code rabbitmq:stream-filter}) and whether it also takes messages
 * without a value ({@code x-stream-match-unfiltered}). The stream skips the chunks whose Bloom filter rules them
 * out; the chunks it reads may still hold other messages (a chunk holds many values, and Bloom filters have false
 * positives), which RabbitMQ delivers too over 0-9-1 and the stream protocol: the client filters again.
 * Immutable.
 *
 * @param values at least one
 */
public record StreamFilterSpec(List<String> values, boolean matchUnfiltered) {
    public StreamFilterSpec {
        values = List.copyOf(values);
        if (values.isEmpty()) {
            throw new IllegalArgumentException("a stream filter needs at least one value");
        }
    }
}
