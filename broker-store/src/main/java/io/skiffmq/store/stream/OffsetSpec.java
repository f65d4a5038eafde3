package io.skiffmq.store.stream;

/**
 * Where a {@link StreamReader} starts, as the stream protocol's subscribe says it (types 1 to 5), with osiris'
 * meaning of each:
 *
 * <ul>
 *   <li>{@link #first()}: the first chunk of the log;</li>
 *   <li>{@link #last()}: the start of the last chunk of messages (tracking chunks are not messages), or
 *       {@link #next()} when there is none;</li>
 *   <li>{@link #next()}: the next chunk to be written;</li>
 *   <li>{@link #offset(long)}: the chunk holding that offset; below the first offset it is the first chunk, past
 *       the end the next one. The consumer skips the records of the chunk below the offset it asked for;</li>
 *   <li>{@link #timestamp(long)}: the first chunk written at or after that time (ms since the epoch); {@link #next()}
 *       when none is.</li>
 * </ul>
 */
public record OffsetSpec(Kind kind, long value) {
    public enum Kind { FIRST, LAST, NEXT, OFFSET, TIMESTAMP }

    private static final OffsetSpec FIRST = new OffsetSpec(Kind.FIRST, 0);
    private static final OffsetSpec LAST = new OffsetSpec(Kind.LAST, 0);
    private static final OffsetSpec NEXT = new OffsetSpec(Kind.NEXT, 0);

    public OffsetSpec {
        if (kind == Kind.OFFSET && value < 0) {
            throw new IllegalArgumentException("offset " + value);
        }
    }

    public static OffsetSpec first() {
        return FIRST;
    }

    public static OffsetSpec last() {
        return LAST;
    }

    public static OffsetSpec next() {
        return NEXT;
    }

    public static OffsetSpec offset(long offset) {
        return new OffsetSpec(Kind.OFFSET, offset);
    }

    public static OffsetSpec timestamp(long epochMillis) {
        return new OffsetSpec(Kind.TIMESTAMP, epochMillis);
    }
}
