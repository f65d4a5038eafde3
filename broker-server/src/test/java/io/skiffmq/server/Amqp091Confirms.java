package io.skiffmq.server;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import java.io.IOException;
import java.util.List;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records a channel's publisher confirms, each tag once: a multiple ack or nack covers every outstanding tag up to its
 * own, which must itself be outstanding. Fails (through {@link #errors}) on a tag confirmed twice or never published.
 * Thread-safe.
 */
final class Amqp091Confirms implements ConfirmListener {
    final NavigableSet<Long> outstanding = new ConcurrentSkipListSet<>();
    final NavigableSet<Long> acked = new ConcurrentSkipListSet<>();
    final NavigableSet<Long> nacked = new ConcurrentSkipListSet<>();
    final List<String> errors = new CopyOnWriteArrayList<>();
    final List<String> events = new CopyOnWriteArrayList<>();

    /** Puts {@code channel} in confirm mode and records its confirms. */
    static Amqp091Confirms on(Channel channel) throws IOException {
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        return confirms;
    }

    void published(long tag) {
        outstanding.add(tag);
    }

    /** Publishes with the tag recorded as outstanding first; returns the tag. */
    long publish(Channel channel, String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body)
            throws IOException {
        long tag = channel.getNextPublishSeqNo();
        published(tag);
        channel.basicPublish(exchange, routingKey, properties, body);
        return tag;
    }

    @Override
    public void handleAck(long tag, boolean multiple) {
        settle(tag, multiple, acked);
        events.add("ack " + tag);
    }

    @Override
    public void handleNack(long tag, boolean multiple) {
        settle(tag, multiple, nacked);
        events.add("nack " + tag);
    }

    private void settle(long tag, boolean multiple, NavigableSet<Long> into) {
        if (!outstanding.contains(tag)) {
            errors.add("confirm of tag " + tag + " which is not outstanding (multiple=" + multiple + ")");
            return;
        }
        NavigableSet<Long> covered = multiple ? outstanding.headSet(tag, true) : outstanding.subSet(tag, true,
            tag, true);
        for (Long t : List.copyOf(covered)) {
            outstanding.remove(t);
            into.add(t);
        }
    }
}
