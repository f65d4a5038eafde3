package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.Broker;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.connection.ClientConnection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * RabbitMQ's {@code message_stats} in {@code basic} rates mode, from the same counters as the Prometheus metrics
 * ({@code docs/metrics.md}): every {@code collect-statistics-interval} the sampler reads the counters of the broker,
 * of each virtual host, of each queue and of each connection, and the rate of each count is the difference to the
 * previous reading divided by the seconds between them. Objects no longer there are forgotten at the next sample.
 * Counts in an answer are read when the answer is made; rates are those of the last two samples (0.0 until there
 * are two).
 *
 * <p>At 100,000 queues a sample must stay cheap, so an object's reading is updated in place, and an object whose
 * counts did not move (most queues, most of the time) costs one lookup and a comparison: no allocation, and no write
 * to {@code rates}, which holds only objects with a rate above zero (an absent one reads 0.0). Objects gone are
 * found by the round they were last read in, without a set of those seen.
 *
 * <p>Threads: {@link #sample} runs on the sampler's own scheduled thread, which alone owns {@code previous} and the
 * readings in it; it publishes each object's rates as a fresh array in the concurrent map {@code rates}, which
 * management threads read ({@link #stats}). The counters are read opaquely, as {@code OwnedCounters} allows any
 * thread to.
 */
final class RateSampler implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RateSampler.class.getName());

    /** The overview's fields, in the order of {@link #overviewValues}. */
    static final List<String> OVERVIEW_FIELDS = List.of("publish", "confirm", "deliver", "deliver_no_ack", "get",
        "get_no_ack", "deliver_get", "get_empty", "redeliver", "ack", "return_unroutable", "drop_unroutable");
    /** A queue's fields, in the order of {@link #queueValues}. */
    static final List<String> QUEUE_FIELDS = List.of("publish", "deliver", "deliver_no_ack", "get", "get_no_ack",
        "deliver_get", "get_empty", "redeliver", "ack");
    /** A connection's byte counts (top-level fields of a connection, as in RabbitMQ). */
    static final List<String> CONNECTION_FIELDS = List.of("recv_oct", "send_oct");
    /** A virtual host's: the overview's, then the byte counts. */
    private static final List<String> VHOST_FIELDS = concat(OVERVIEW_FIELDS, CONNECTION_FIELDS);

    /** The key of the broker-wide totals. */
    private static final Object OVERVIEW = new Object();

    /** The key of a virtual host's totals. */
    private record VhostKey(String name) {
    }

    /** The key of a connection's message counts (its byte counts are keyed by its counters). */
    private record ConnectionMessages(ConnectionCounters counters) {
    }

    private final Broker broker;
    private final long intervalMillis;
    private final ScheduledExecutorService timer;
    /** The sampler thread's: each object's last reading. */
    private final Map<Object, Reading> previous = new HashMap<>();
    /** The sampler thread's: the number of the sample being taken. */
    private long round;
    /** The sampler thread's: how many objects this sample read. */
    private int read;
    /** The sampler thread's: one queue's counts, read into this before they are compared. */
    private final long[] queueCounts = new long[QUEUE_FIELDS.size()];
    /** Written by the sampler thread, read by management threads: rates per second, of objects whose counts moved. */
    private final Map<Object, double[]> rates = new ConcurrentHashMap<>();

    /** An object's counts at its last sample; the sampler thread's. */
    private static final class Reading {
        final long[] values;
        long nanos;
        /** The sample it was last read in. */
        long round;
        /** It has an entry in {@code rates}. */
        boolean rated;

        Reading(long[] values, long nanos, long round) {
            this.values = values;
            this.nanos = nanos;
            this.round = round;
        }
    }

    RateSampler(Broker broker, long intervalMillis) {
        if (intervalMillis <= 0) {
            throw new IllegalArgumentException("collect-statistics-interval must be positive");
        }
        this.broker = broker;
        this.intervalMillis = intervalMillis;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "skiffmq-rate-sampler");
            t.setDaemon(true);
            return t;
        });
    }

    void start() {
        timer.scheduleAtFixedRate(this::sample, 0, intervalMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** One sample of every object (on the sampler thread). */
    private void sample() {
        try {
            long now = System.nanoTime();
            round++;
            read = 0;
            record(OVERVIEW, overviewValues(broker.counters()), now);
            for (String name : broker.admin().vhosts()) {
                record(new VhostKey(name), vhostValues(name), now);
                VirtualHost vhost = broker.vhost(name);
                if (vhost != null) {
                    for (Queue queue : vhost.queues()) {
                        record(queue, queueValues(queue.counters(), queueCounts), now);
                    }
                }
            }
            for (ClientConnection connection : broker.connections()) {
                record(connection.counters(), connectionValues(connection.counters()), now);
                record(new ConnectionMessages(connection.counters()),
                    messageValues(BrokerCounters.of(connection.counters())), now);
            }
            if (previous.size() > read) {
                previous.entrySet().removeIf(e -> {
                    if (e.getValue().round == round) {
                        return false;
                    }
                    rates.remove(e.getKey()); // gone since the last sample
                    return true;
                });
            }
        } catch (RuntimeException e) {
            // a failed sample must not end the schedule
            LOG.log(System.Logger.Level.WARNING, "sampling message rates failed", e);
        }
    }

    /** Compares {@code values} (not kept: it may be reused) with the object's last reading, and keeps them. */
    private void record(Object key, long[] values, long now) {
        read++;
        Reading before = previous.get(key);
        if (before == null) {
            previous.put(key, new Reading(values.clone(), now, round));
            return;
        }
        before.round = round;
        if (now <= before.nanos) {
            return;
        }
        if (Arrays.equals(values, before.values)) {
            if (before.rated) {
                before.rated = false;
                rates.remove(key); // nothing moved since the last sample: every rate is 0
            }
        } else {
            double seconds = (now - before.nanos) / 1e9;
            double[] perSecond = new double[values.length];
            for (int i = 0; i < values.length; i++) {
                perSecond[i] = Math.max(0, values[i] - before.values[i]) / seconds;
            }
            rates.put(key, perSecond);
            before.rated = true;
            System.arraycopy(values, 0, before.values, 0, values.length);
        }
        before.nanos = now;
    }

    /** The overview's {@code message_stats}: counts read now, rates of the last samples. */
    Map<String, Object> overview() {
        return stats(OVERVIEW, OVERVIEW_FIELDS, overviewValues(broker.counters()));
    }

    /** A queue's {@code message_stats}. */
    Map<String, Object> queue(Queue queue) {
        return stats(queue, QUEUE_FIELDS, queueValues(queue.counters()));
    }

    /**
     * A connection's {@code recv_oct}, {@code send_oct} and their details, to put in its JSON object, and its
     * {@code message_stats} (the overview's fields, counted by its publishers and consumers; RabbitMQ shows these
     * per channel only).
     */
    Map<String, Object> connection(ClientConnection connection) {
        ConnectionCounters counters = connection.counters();
        Map<String, Object> fields = stats(counters, CONNECTION_FIELDS, connectionValues(counters));
        fields.put("message_stats", stats(new ConnectionMessages(counters), OVERVIEW_FIELDS,
            messageValues(BrokerCounters.of(counters))));
        return fields;
    }

    /**
     * A virtual host's {@code message_stats} (what connections to it counted, open or closed) and its
     * {@code recv_oct}, {@code send_oct} with their details, to put in its JSON object.
     */
    Map<String, Object> vhost(String name) {
        long[] values = vhostValues(name);
        Map<String, Object> fields = new LinkedHashMap<>();
        Map<String, Object> all = stats(new VhostKey(name), VHOST_FIELDS, values);
        Map<String, Object> messages = new LinkedHashMap<>(all);
        for (String bytes : CONNECTION_FIELDS) {
            fields.put(bytes, messages.remove(bytes));
            fields.put(bytes + "_details", messages.remove(bytes + "_details"));
        }
        fields.put("message_stats", messages);
        return fields;
    }

    private long[] vhostValues(String name) {
        List<ConnectionCounters> open = new ArrayList<>();
        for (ClientConnection connection : broker.connections()) {
            Access opened = connection.opened();
            if (opened != null && name.equals(opened.vhost())) {
                open.add(connection.counters());
            }
        }
        BrokerCounters.Totals t = broker.counters().vhostTotals(name, open);
        long[] messages = messageValues(t);
        long[] values = Arrays.copyOf(messages, messages.length + 2);
        values[messages.length] = t.bytesIn();
        values[messages.length + 1] = t.bytesOut();
        return values;
    }

    /** The overview's {@code message_stats} summed over {@code vhosts}, for a user who sees only those. */
    Map<String, Object> overviewOf(java.util.Collection<String> vhosts) {
        long[] counts = new long[OVERVIEW_FIELDS.size()];
        double[] perSecond = new double[counts.length];
        for (String name : vhosts) {
            long[] values = vhostValues(name);
            double[] rated = rates.get(new VhostKey(name));
            for (int i = 0; i < counts.length; i++) {
                counts[i] += values[i];
                perSecond[i] += rated == null ? 0.0 : rated[i];
            }
        }
        return stats(OVERVIEW_FIELDS, counts, perSecond);
    }

    private Map<String, Object> stats(Object key, List<String> fields, long[] values) {
        return stats(fields, values, rates.get(key));
    }

    /** Each field's count and, as RabbitMQ shows it, {@code field_details: {"rate": r}}. */
    private static Map<String, Object> stats(List<String> fields, long[] values, double[] perSecond) {
        Map<String, Object> stats = new LinkedHashMap<>();
        for (int i = 0; i < fields.size(); i++) {
            stats.put(fields.get(i), values[i]);
            stats.put(fields.get(i) + "_details", Map.of("rate", perSecond == null ? 0.0 : perSecond[i]));
        }
        return stats;
    }

    static long[] overviewValues(BrokerCounters counters) {
        long[] sum = new long[OVERVIEW_FIELDS.size()];
        for (String protocol : List.of(BrokerCounters.AMQP091, BrokerCounters.AMQP10)) {
            long[] one = messageValues(counters.totals(protocol));
            for (int i = 0; i < sum.length; i++) {
                sum[i] += one[i];
            }
        }
        return sum;
    }

    /** {@code t}'s counts of {@link #OVERVIEW_FIELDS}, in their order. */
    static long[] messageValues(BrokerCounters.Totals t) {
        return new long[] {t.received(), t.confirmed(), t.deliveredConsumeManualAck(), t.deliveredConsumeAutoAck(),
            t.deliveredGetManualAck(), t.deliveredGetAutoAck(), t.delivered(), t.getEmpty(), t.redelivered(),
            t.acknowledged(), t.unroutableReturned(), t.unroutableDropped()};
    }

    static long[] queueValues(QueueCounters c) {
        return queueValues(c, new long[QUEUE_FIELDS.size()]);
    }

    /** {@code c}'s counts of {@link #QUEUE_FIELDS}, in their order, into {@code into}; returns it. */
    private static long[] queueValues(QueueCounters c, long[] into) {
        long deliver = c.deliveredConsumeManualAck();
        long deliverNoAck = c.deliveredConsumeAutoAck();
        long get = c.deliveredGetManualAck();
        long getNoAck = c.deliveredGetAutoAck();
        // deliver_get from the same readings as its parts, so the four always add up to it
        into[0] = c.published();
        into[1] = deliver;
        into[2] = deliverNoAck;
        into[3] = get;
        into[4] = getNoAck;
        into[5] = deliver + deliverNoAck + get + getNoAck;
        into[6] = c.getEmpty();
        into[7] = c.redelivered();
        into[8] = c.acknowledged();
        return into;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> both = new ArrayList<>(a);
        both.addAll(b);
        return List.copyOf(both);
    }

    static long[] connectionValues(ConnectionCounters c) {
        return new long[] {c.bytesInCount(), c.bytesOutCount()};
    }
}
