package io.skiffmq.benchmarks;

import com.rabbitmq.stream.Message;
import com.rabbitmq.stream.impl.Client;
import com.rabbitmq.stream.impl.FilterValuePublisher;
import io.netty.channel.EventLoopGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One producer of a {@link StreamLoad} run: a connection of its own and a thread that publishes batches of
 * {@code --batch-size} messages in one publish frame each, at most {@code --in-flight} unconfirmed, paced when asked.
 * Its fields are its thread's, but for the confirm times (written before the publish that hands the messages to
 * the connection's event loop, read there when the confirm comes) and the permits.
 */
final class StreamLoadProducer {
    private static final byte PUBLISHER = 0;

    private final Client client;
    private final StreamLoadCounters counters;
    private final String stream;
    private final int index;
    private final int size;
    private final int batchSize;
    private final int inFlight;
    private final double rate;
    private final long count;
    private final Semaphore permits;
    /** Send time by publishing id (a ring at least as long as the messages in flight). */
    private final long[] sentAt;
    private final int mask;
    /** The filter values messages carry in turn, empty for none; each for {@link #filterRun} messages. */
    private final String[] filterValues;
    private final long filterRun;
    /** Publish v2 with the messages' filter values; null without them (publish v1, as RabbitMQ 3.10 takes). */
    private final FilterValuePublisher filtering;
    private volatile boolean running;

    /**
     * Connects and declares the publisher.
     *
     * @param count messages to publish, 0 for as many as the run's time allows
     */
    StreamLoadProducer(Map<String, String> options, EventLoopGroup group, StreamLoadCounters counters, int index,
            long count) {
        this.counters = counters;
        this.stream = options.get("stream");
        this.index = index;
        this.size = Integer.parseInt(options.get("size"));
        this.batchSize = Integer.parseInt(options.get("batch-size"));
        this.inFlight = Math.max(batchSize, Integer.parseInt(options.get("in-flight")));
        this.rate = Double.parseDouble(options.get("rate")) / Integer.parseInt(options.get("producers"));
        this.count = count;
        this.permits = new Semaphore(inFlight);
        this.sentAt = new long[Integer.highestOneBit(inFlight) * 2];
        this.mask = sentAt.length - 1;
        this.filterValues = options.get("filter-value-set").isEmpty() ? new String[0]
            : options.get("filter-value-set").split(",");
        long run = Long.parseLong(options.get("filter-run"));
        this.filterRun = run > 0 ? run : batchSize;
        this.client = new Client(StreamLoad.parameters(options, group)
            .publishConfirmListener((publisher, id) -> confirmed(id))
            .publishErrorListener((publisher, id, code) -> {
                counters.errors.increment();
                permits.release();
            })
            .shutdownListener(context -> {
                if (running) {
                    counters.fail("producer " + index + "'s connection closed: " + context.getShutdownReason());
                }
            }));
        this.filtering = filterValues.length == 0 ? null
            : new FilterValuePublisher(client, message -> ((StreamLoadCodec.Outgoing) message).filterValue);
        Client.Response response = client.declarePublisher(PUBLISHER, null, stream);
        if (!response.isOk()) {
            client.close();
            throw new IllegalStateException("cannot declare a publisher on " + stream + ": response code "
                + response.getResponseCode());
        }
    }

    /** Starts publishing until {@code end} ({@link System#nanoTime()}) or the count. */
    void start(long end) {
        running = true;
        Thread thread = new Thread(() -> publish(end), "stream-load-producer-" + index);
        thread.setDaemon(true);
        thread.start();
    }

    boolean running() {
        return running;
    }

    private void publish(long end) {
        List<Message> batch = new ArrayList<>(batchSize);
        long sequence = 0;
        long started = System.nanoTime();
        try {
            while (System.nanoTime() < end && (count == 0 || sequence < count) && counters.failure == null) {
                int n = (int) (count == 0 ? batchSize : Math.min(batchSize, count - sequence));
                if (rate > 0) {
                    long due = started + (long) (sequence * 1e9 / rate);
                    while (System.nanoTime() < Math.min(due, end)) {
                        LockSupport.parkNanos(Math.min(due, end) - System.nanoTime());
                    }
                }
                if (!permits.tryAcquire(n, 100, TimeUnit.MILLISECONDS)) {
                    continue; // so the end of the run is seen while the broker holds confirms back
                }
                long now = System.nanoTime();
                batch.clear();
                for (int i = 0; i < n; i++) {
                    long id = ++sequence;
                    sentAt[(int) (id & mask)] = now;
                    batch.add(new StreamLoadCodec.Outgoing(now, LoadBody.id(index, id), size, id, filterValue(id)));
                }
                if (filtering == null) {
                    client.publish(PUBLISHER, batch, message -> ((StreamLoadCodec.Outgoing) message).publishingId);
                } else {
                    filtering.publish(PUBLISHER, batch, message -> ((StreamLoadCodec.Outgoing) message).publishingId);
                }
            }
            if (count > 0 && !permits.tryAcquire(inFlight, 60, TimeUnit.SECONDS)) {
                counters.fail("producer " + index + ": confirms missing a minute after the last publish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            counters.fail("producer " + index + ": " + e);
        } finally {
            running = false;
        }
    }

    /** The filter value of the message with publishing id {@code id} (from 1), null when there are none. */
    String filterValue(long id) {
        return filterValues.length == 0 ? null : filterValues[(int) ((id - 1) / filterRun % filterValues.length)];
    }

    private void confirmed(long id) {
        long now = System.nanoTime();
        counters.confirmLatency.recordValue(Math.max(0, (now - sentAt[(int) (id & mask)]) / 1000));
        counters.confirmed.increment();
        counters.lastConfirm.set(now);
        permits.release();
    }

    void close() {
        running = false;
        client.close();
    }
}
