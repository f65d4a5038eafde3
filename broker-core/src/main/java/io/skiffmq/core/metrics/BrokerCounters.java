package io.skiffmq.core.metrics;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The broker's totals by protocol (RabbitMQ's {@code rabbitmq_global_*} counters), with nothing shared on the
 * message path: each open connection counts in its own {@link ConnectionCounters}; when it closes, its counts are
 * added to the totals of closed connections here. A reading sums the closed totals and the open connections
 * (a scrape's cost grows with the connections, a message's does not). {@link #closed} adds before it removes, so
 * a reading that meets a connection in that instant counts it twice, never not at all. The closed totals are kept
 * by virtual host too ({@link #vhostTotals}), for the HTTP API's per-vhost {@code message_stats}. Thread-safe.
 */
public final class BrokerCounters {
    /** RabbitMQ's protocol labels, in the order {@link #totals} is indexed. */
    public static final String AMQP091 = "amqp091";
    public static final String AMQP10 = "amqp10";
    public static final String STREAM = "stream";

    private final Set<ConnectionCounters> open = ConcurrentHashMap.newKeySet();
    private final LongAdder[][] closed = {adders(), adders(), adders()};
    /** Closed connections' totals (all protocols) by the virtual host they had opened. */
    private final Map<String, LongAdder[]> closedByVhost = new ConcurrentHashMap<>();

    private static LongAdder[] adders() {
        LongAdder[] adders = new LongAdder[ConnectionCounters.COUNT];
        for (int i = 0; i < adders.length; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
    }

    /** A connection opened: its counts belong to the totals from now on. */
    public void opened(ConnectionCounters counters) {
        open.add(counters);
    }

    /**
     * A connection closed: its counts move to the closed totals (and those of {@code vhost}, the virtual host it
     * had opened, or null). Call once its loop counts no more for it.
     */
    public void closed(ConnectionCounters counters, String vhost) {
        if (!open.contains(counters)) {
            return;
        }
        add(closed[index(counters.protocol())], counters);
        if (vhost != null) {
            add(closedByVhost.computeIfAbsent(vhost, v -> adders()), counters);
        }
        open.remove(counters);
    }

    private static void add(LongAdder[] totals, ConnectionCounters counters) {
        for (int i = 0; i < ConnectionCounters.COUNT; i++) {
            if (!ConnectionCounters.gauge(i)) {
                totals[i].add(counters.value(i));
            }
        }
    }

    /** A virtual host was deleted: one made again by that name starts from zero. */
    public void forgetVhost(String vhost) {
        closedByVhost.remove(vhost);
    }

    /**
     * The totals (both protocols) of {@code vhost}: its closed connections' and those of {@code openInVhost}, the
     * open connections that opened it (the caller knows which, this class does not).
     */
    public Totals vhostTotals(String vhost, Iterable<ConnectionCounters> openInVhost) {
        long[] sum = new long[ConnectionCounters.COUNT];
        LongAdder[] totals = closedByVhost.get(vhost);
        if (totals != null) {
            for (int i = 0; i < sum.length; i++) {
                sum[i] = totals[i].sum();
            }
        }
        for (ConnectionCounters counters : openInVhost) {
            for (int i = 0; i < sum.length; i++) {
                sum[i] += counters.value(i);
            }
        }
        return new Totals(sum);
    }

    /** One connection's counts, read now, in the shape of totals. */
    public static Totals of(ConnectionCounters counters) {
        long[] values = new long[ConnectionCounters.COUNT];
        for (int i = 0; i < values.length; i++) {
            values[i] = counters.value(i);
        }
        return new Totals(values);
    }

    /** The totals of one protocol, read now. */
    public Totals totals(String protocol) {
        long[] sum = new long[ConnectionCounters.COUNT];
        LongAdder[] totals = closed[index(protocol)];
        for (int i = 0; i < sum.length; i++) {
            sum[i] = totals[i].sum();
        }
        for (ConnectionCounters counters : open) {
            if (counters.protocol().equals(protocol)) {
                for (int i = 0; i < sum.length; i++) {
                    sum[i] += counters.value(i);
                }
            }
        }
        return new Totals(sum);
    }

    private static int index(String protocol) {
        return switch (protocol) {
            case AMQP091 -> 0;
            case AMQP10 -> 1;
            case STREAM -> 2;
            default -> throw new IllegalArgumentException("unknown protocol " + protocol);
        };
    }

    /** One protocol's totals at one reading. */
    public static final class Totals {
        private final long[] values;

        Totals(long[] values) {
            this.values = values;
        }

        public long received() {
            return values[ConnectionCounters.RECEIVED];
        }

        public long receivedConfirm() {
            return values[ConnectionCounters.RECEIVED_CONFIRM];
        }

        public long routed() {
            return values[ConnectionCounters.ROUTED];
        }

        public long unroutableDropped() {
            return values[ConnectionCounters.UNROUTABLE_DROPPED];
        }

        public long unroutableReturned() {
            return values[ConnectionCounters.UNROUTABLE_RETURNED];
        }

        public long confirmed() {
            return values[ConnectionCounters.CONFIRMED];
        }

        public long delivered() {
            return deliveredConsumeManualAck() + deliveredConsumeAutoAck() + deliveredGetManualAck()
                + deliveredGetAutoAck();
        }

        public long deliveredConsumeManualAck() {
            return values[ConnectionCounters.CONSUME_MANUAL_ACK];
        }

        public long deliveredConsumeAutoAck() {
            return values[ConnectionCounters.CONSUME_AUTO_ACK];
        }

        public long deliveredGetManualAck() {
            return values[ConnectionCounters.GET_MANUAL_ACK];
        }

        public long deliveredGetAutoAck() {
            return values[ConnectionCounters.GET_AUTO_ACK];
        }

        public long getEmpty() {
            return values[ConnectionCounters.GET_EMPTY];
        }

        public long redelivered() {
            return values[ConnectionCounters.REDELIVERED];
        }

        public long acknowledged() {
            return values[ConnectionCounters.ACKNOWLEDGED];
        }

        public long bytesIn() {
            return values[ConnectionCounters.BYTES_IN];
        }

        public long bytesOut() {
            return values[ConnectionCounters.BYTES_OUT];
        }

        /** Channels (0-9-1) or sessions (AMQP 1.0) open now, on open connections. */
        public long channels() {
            return values[ConnectionCounters.CHANNELS];
        }

        /** Channels or sessions ever opened; those closed are these less {@link #channels()}. */
        public long channelsOpened() {
            return values[ConnectionCounters.CHANNELS_OPENED];
        }

        /** Publishers now, on open connections. */
        public long publishers() {
            return values[ConnectionCounters.PUBLISHERS];
        }

        /** Consumers now, on open connections. */
        public long consumers() {
            return values[ConnectionCounters.CONSUMERS];
        }
    }
}
