package io.skiffmq.server.connection;

import java.util.List;

/**
 * What the HTTP API shows of one 0-9-1 channel or AMQP 1.0 session, read on its connection's event loop.
 * Immutable.
 *
 * @param number the channel number (AMQP 1.0: the session's channel)
 * @param prefetchCount 0-9-1 {@code basic.qos} prefetch for new consumers (0: none; AMQP 1.0: 0, credit is per link)
 * @param unacknowledged deliveries sent and not yet settled by the client
 * @param confirm publisher confirms are on (0-9-1)
 * @param transactional {@code tx.select} was sent (0-9-1)
 * @param consumers the channel's consumers (AMQP 1.0: its sending links)
 */
public record ChannelInfo(int number, int prefetchCount, int unacknowledged, boolean confirm,
        boolean transactional, List<Consumer> consumers) {

    /**
     * One consumer.
     *
     * @param tag the 0-9-1 consumer tag (AMQP 1.0: {@code ctag-} and the link handle)
     * @param queue the queue it consumes from
     * @param ackRequired false for no-ack (0-9-1) or pre-settled (AMQP 1.0) consumers
     */
    public record Consumer(String tag, String queue, boolean ackRequired, int prefetchCount) {
    }
}
