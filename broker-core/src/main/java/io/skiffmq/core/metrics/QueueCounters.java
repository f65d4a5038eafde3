package io.skiffmq.core.metrics;

/**
 * What one queue counted since it was created: messages that entered it, deliveries by kind (RabbitMQ's
 * consume/get with manual/automatic acknowledgement), redeliveries and acknowledgements. Written by the queue's own
 * thread only (its executor), read from any ({@link OwnedCounters}).
 */
public final class QueueCounters extends OwnedCounters {
    private static final int PUBLISHED = 0;
    private static final int CONSUME_MANUAL_ACK = 1;
    private static final int CONSUME_AUTO_ACK = 2;
    private static final int GET_MANUAL_ACK = 3;
    private static final int GET_AUTO_ACK = 4;
    private static final int GET_EMPTY = 5;
    private static final int REDELIVERED = 6;
    private static final int ACKNOWLEDGED = 7;
    private static final int PUBLISHED_BYTES = 8;
    private static final int DELIVERED_BYTES = 9;

    public QueueCounters() {
        super(10);
    }

    // ---- the queue's thread ---------------------------------------------------------------------------------

    /**
     * A message of {@code size} bytes ({@link io.skiffmq.core.message.Message#size()}, its encoded form: not the
     * body size, which for AMQP 1.0 means walking the sections, costing more than all the counting) entered the queue.
     */
    public void countPublished(int size) {
        add(PUBLISHED, 1);
        add(PUBLISHED_BYTES, size);
    }

    /**
     * A message was handed to a consumer.
     *
     * @param get by a pull ({@code basic.get}) rather than a subscription
     * @param autoAck the consumer settled it as sent (no acknowledgement will come)
     * @param redelivery it had been handed out before
     * @param size its {@link io.skiffmq.core.message.Message#size()}
     */
    public void delivered(boolean get, boolean autoAck, boolean redelivery, int size) {
        add(DELIVERED_BYTES, size);
        add(get ? (autoAck ? GET_AUTO_ACK : GET_MANUAL_ACK) : (autoAck ? CONSUME_AUTO_ACK : CONSUME_MANUAL_ACK), 1);
        if (redelivery) {
            add(REDELIVERED, 1);
        }
    }

    /** A pull found nothing. */
    public void foundEmpty() {
        add(GET_EMPTY, 1);
    }

    /** A consumer acknowledged (accepted) a message. */
    public void countAcknowledged() {
        add(ACKNOWLEDGED, 1);
    }

    /** A consumer acknowledged (accepted) {@code count} messages at once. */
    public void countAcknowledged(int count) {
        add(ACKNOWLEDGED, count);
    }

    // ---- any thread -----------------------------------------------------------------------------------------

    public long published() {
        return get(PUBLISHED);
    }

    /** Bytes of the messages that entered the queue (as {@link #countPublished} counts them). */
    public long publishedBytes() {
        return get(PUBLISHED_BYTES);
    }

    /** Bytes of the messages the queue delivered. */
    public long deliveredBytes() {
        return get(DELIVERED_BYTES);
    }

    /** Every delivery: to subscriptions and to pulls, acknowledged or not. */
    public long delivered() {
        return get(CONSUME_MANUAL_ACK) + get(CONSUME_AUTO_ACK) + get(GET_MANUAL_ACK) + get(GET_AUTO_ACK);
    }

    public long deliveredConsumeManualAck() {
        return get(CONSUME_MANUAL_ACK);
    }

    public long deliveredConsumeAutoAck() {
        return get(CONSUME_AUTO_ACK);
    }

    public long deliveredGetManualAck() {
        return get(GET_MANUAL_ACK);
    }

    public long deliveredGetAutoAck() {
        return get(GET_AUTO_ACK);
    }

    public long getEmpty() {
        return get(GET_EMPTY);
    }

    public long redelivered() {
        return get(REDELIVERED);
    }

    public long acknowledged() {
        return get(ACKNOWLEDGED);
    }
}
