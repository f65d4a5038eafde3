package io.skiffmq.core.queue;

/**
 * How a queue paces a consumer's deliveries, one mechanism for every protocol:
 * <ul>
 * <li>{@link #credit()}: AMQP 1.0 link credit. The consumer grants credit with {@link Queue#flow}; the queue
 *     keeps delivery-count, credit and drain [2.6.7] and never sends more than granted. A 0-9-1 consumer without a
 *     prefetch of its own is paced so too, by credit its connection grants.</li>
 * <li>{@link #prefetch}: AMQP 0-9-1 {@code basic.qos}. At most {@code count} unsettled deliveries (0: no limit).
 *     A pre-settled (no-ack) consumer holds nothing unsettled, so prefetch does not limit it, as in RabbitMQ.</li>
 * <li>{@link #pull()}: nothing is pushed; messages leave only by {@link Queue#get} ({@code basic.get}).</li>
 * </ul>
 * Either push kind may also wait for a channel-wide {@link PrefetchLimit} (0-9-1 {@code basic.qos global}): at most
 * that many unsettled deliveries across the channel's consumers.
 */
public record ConsumerFlow(Kind kind, int prefetch, PrefetchLimit channelLimit) {
    public enum Kind { CREDIT, PREFETCH, PULL }

    private static final ConsumerFlow CREDIT = new ConsumerFlow(Kind.CREDIT, 0, null);
    private static final ConsumerFlow PULL = new ConsumerFlow(Kind.PULL, 0, null);

    public ConsumerFlow {
        if (prefetch < 0) {
            throw new IllegalArgumentException("prefetch " + prefetch + " is negative");
        }
    }

    public static ConsumerFlow credit() {
        return CREDIT;
    }

    /** Credit, and waiting for a channel-wide limit (null: none). */
    public static ConsumerFlow credit(PrefetchLimit channelLimit) {
        return channelLimit == null ? CREDIT : new ConsumerFlow(Kind.CREDIT, 0, channelLimit);
    }

    /**
     * @param count the most unsettled deliveries this consumer may hold; 0 for no limit
     * @param channelLimit shared by the consumers of one channel, or null
     */
    public static ConsumerFlow prefetch(int count, PrefetchLimit channelLimit) {
        return new ConsumerFlow(Kind.PREFETCH, count, channelLimit);
    }

    public static ConsumerFlow pull() {
        return PULL;
    }
}
