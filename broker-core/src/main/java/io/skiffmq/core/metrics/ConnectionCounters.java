package io.skiffmq.core.metrics;

/**
 * What one client connection counted: messages its publishers sent and what became of them (RabbitMQ's global
 * protocol counters: received, received expecting a confirm, routed, unroutable dropped or returned, confirmed),
 * what its consumers got (delivered by kind, redelivered, acknowledged, empty gets), and bytes read and written.
 * Written on the connection's event loop only (its publishers, links, channels and handlers all run there), read
 * from any thread ({@link OwnedCounters}).
 */
public final class ConnectionCounters extends OwnedCounters {
    static final int RECEIVED = 0;
    static final int RECEIVED_CONFIRM = 1;
    static final int ROUTED = 2;
    static final int UNROUTABLE_DROPPED = 3;
    static final int UNROUTABLE_RETURNED = 4;
    static final int CONFIRMED = 5;
    static final int CONSUME_MANUAL_ACK = 6;
    static final int CONSUME_AUTO_ACK = 7;
    static final int GET_MANUAL_ACK = 8;
    static final int GET_AUTO_ACK = 9;
    static final int GET_EMPTY = 10;
    static final int REDELIVERED = 11;
    static final int ACKNOWLEDGED = 12;
    static final int BYTES_IN = 13;
    static final int BYTES_OUT = 14;
    /** A gauge, not a counter: channels (0-9-1) or sessions (AMQP 1.0) open now; left out of closed totals. */
    static final int CHANNELS = 15;
    /** Channels (0-9-1) or sessions (AMQP 1.0) ever opened: RabbitMQ's {@code channels_opened_total}. */
    static final int CHANNELS_OPENED = 16;
    /**
     * Gauges, as {@link #CHANNELS}: publishers (0-9-1 channels that have routed a message, AMQP 1.0 sending
     * links) and consumers (0-9-1 {@code basic.consume}s, AMQP 1.0 receiving links) now, RabbitMQ's global
     * {@code publishers} and {@code consumers}. Counted where they begin and end, never per message.
     */
    static final int PUBLISHERS = 17;
    static final int CONSUMERS = 18;
    static final int COUNT = 19;

    private final String protocol;

    /** @param protocol RabbitMQ's label for it: {@code amqp091}, {@code amqp10} or {@code stream} */
    public ConnectionCounters(String protocol) {
        super(COUNT);
        this.protocol = protocol;
    }

    public String protocol() {
        return protocol;
    }

    // ---- the connection's event loop ------------------------------------------------------------------------

    /** A publisher sent a message; {@code confirm}: it waits for a confirm (settlement) of it. */
    public void received(boolean confirm) {
        add(RECEIVED, 1);
        if (confirm) {
            add(RECEIVED_CONFIRM, 1);
        }
    }

    /** {@code n} messages published at once (the stream protocol's publish), each waiting for its confirm. */
    public void receivedConfirmed(long n) {
        add(RECEIVED, n);
        add(RECEIVED_CONFIRM, n);
    }

    /** A message went to at least one queue. */
    public void routed() {
        add(ROUTED, 1);
    }

    /** {@code n} messages went to their queue. */
    public void routed(long n) {
        add(ROUTED, n);
    }

    /** A message went nowhere: {@code returned} to its publisher (0-9-1 mandatory), else dropped. */
    public void unroutable(boolean returned) {
        add(returned ? UNROUTABLE_RETURNED : UNROUTABLE_DROPPED, 1);
    }

    /** {@code n} messages were confirmed to their publisher. */
    public void confirmed(long n) {
        add(CONFIRMED, n);
    }

    /** A message was delivered to a consumer; see {@link QueueCounters#delivered}. */
    public void delivered(boolean get, boolean autoAck, boolean redelivery) {
        add(get ? (autoAck ? GET_AUTO_ACK : GET_MANUAL_ACK) : (autoAck ? CONSUME_AUTO_ACK : CONSUME_MANUAL_ACK), 1);
        if (redelivery) {
            add(REDELIVERED, 1);
        }
    }

    /**
     * {@code n} messages were delivered to a consumer that acknowledges nothing (the stream protocol's chunks), as
     * RabbitMQ counts them: consumed with automatic acknowledgement.
     */
    public void deliveredAutoAck(long n) {
        add(CONSUME_AUTO_ACK, n);
    }

    /** A pull ({@code basic.get}) found the queue empty. */
    public void foundEmpty() {
        add(GET_EMPTY, 1);
    }

    /** A consumer acknowledged {@code n} messages. */
    public void acknowledged(long n) {
        add(ACKNOWLEDGED, n);
    }

    /** A channel (0-9-1) or session (AMQP 1.0) opened. */
    public void channelOpened() {
        add(CHANNELS, 1);
        add(CHANNELS_OPENED, 1);
    }

    /** One closed. */
    public void channelClosed() {
        add(CHANNELS, -1);
    }

    /** {@code n} publishers began ({@code n} > 0) or ended ({@code n} < 0). */
    public void publishers(int n) {
        add(PUBLISHERS, n);
    }

    /** {@code n} consumers began ({@code n} > 0) or ended ({@code n} < 0). */
    public void consumers(int n) {
        add(CONSUMERS, n);
    }

    /** True for the gauges (what is open now), which a closed connection leaves out of the totals. */
    static boolean gauge(int index) {
        return index == CHANNELS || index == PUBLISHERS || index == CONSUMERS;
    }

    public void bytesIn(long n) {
        add(BYTES_IN, n);
    }

    public void bytesOut(long n) {
        add(BYTES_OUT, n);
    }

    // ---- any thread -----------------------------------------------------------------------------------------

    /** Counter {@code index} (the constants above; {@link BrokerCounters} sums them by index). */
    long value(int index) {
        return get(index);
    }

    public long received() {
        return get(RECEIVED);
    }

    public long routedCount() {
        return get(ROUTED);
    }

    public long confirmedCount() {
        return get(CONFIRMED);
    }

    public long deliveredCount() {
        return get(CONSUME_MANUAL_ACK) + get(CONSUME_AUTO_ACK) + get(GET_MANUAL_ACK) + get(GET_AUTO_ACK);
    }

    public long acknowledgedCount() {
        return get(ACKNOWLEDGED);
    }

    public long redeliveredCount() {
        return get(REDELIVERED);
    }

    /** Channels or sessions open now. */
    public long channels() {
        return get(CHANNELS);
    }

    public long bytesInCount() {
        return get(BYTES_IN);
    }

    public long bytesOutCount() {
        return get(BYTES_OUT);
    }
}
