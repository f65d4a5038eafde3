package io.skiffmq.core.stream;

/**
 * Where a stream consumer starts reading, as RabbitMQ's offset specifications say it (the stream protocol's
 * subscribe types 1 to 5, 0-9-1's {@code x-stream-offset}, AMQP 1.0's {@code rabbitmq:stream-offset-spec}):
 *
 * <ul>
 *   <li>{@link #first()}: the first chunk of the stream (retention moves it);</li>
 *   <li>{@link #last()}: the start of the last chunk of messages, or {@link #next()} when there is none;</li>
 *   <li>{@link #next()}: the messages written from now on;</li>
 *   <li>{@link #offset(long)}: that offset on (below the first offset: the first; past the end: from when it is
 *       written);</li>
 *   <li>{@link #timestamp(long)}: the first chunk written at or after that time (ms since the epoch); {@link #next()}
 *       when none is.</li>
 * </ul>
 *
 * Reading starts at a chunk: a consumer from {@code offset(n)} reads the chunk holding {@code n} and skips its
 * records below {@code n} (the stream protocol's client skips them itself). Immutable.
 */
public record StreamOffset(Kind kind, long value) {
    public enum Kind { FIRST, LAST, NEXT, OFFSET, TIMESTAMP }

    private static final StreamOffset FIRST = new StreamOffset(Kind.FIRST, 0);
    private static final StreamOffset LAST = new StreamOffset(Kind.LAST, 0);
    private static final StreamOffset NEXT = new StreamOffset(Kind.NEXT, 0);

    public StreamOffset {
        if (kind == Kind.OFFSET && value < 0) {
            throw new IllegalArgumentException("offset " + value);
        }
    }

    public static StreamOffset first() {
        return FIRST;
    }

    public static StreamOffset last() {
        return LAST;
    }

    public static StreamOffset next() {
        return NEXT;
    }

    public static StreamOffset offset(long offset) {
        return new StreamOffset(Kind.OFFSET, offset);
    }

    public static StreamOffset timestamp(long epochMillis) {
        return new StreamOffset(Kind.TIMESTAMP, epochMillis);
    }

    /** The records of the first chunk read that the consumer skips: those below this offset. */
    long skipBelow() {
        return kind == Kind.OFFSET ? value : 0;
    }
}
