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

    public QueueCounters() {
        super(8);
    }

    // ---- the queue's thread ---------------------------------------------------------------------------------

    /**
     * A message entered the queue. (Not its size: an AMQP 1.0 message's body size is found by walking its sections,
     * which costs more than the rest of the counting together.)
     */
    public void countPublished() {
        add(PUBLISHED, 1);
    }

    /**
     * A message was handed to a consumer.
     *
     * @param get by a pull ({@code basic.get}) rather than a subscription
     * @param autoAck the consumer settled it as sent (no acknowledgement will come)
     * @param redelivery it had been handed out before
     */
    public void delivered(boolean get, boolean autoAck, boolean redelivery) {
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

    // ---- any thread -----------------------------------------------------------------------------------------

    public long published() {
        return get(PUBLISHED);
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
