package io.skiffmq.server.amqp091;

import io.netty.util.collection.IntObjectHashMap;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.ChannelMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.MethodCodec;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.server.connection.ConnectionAdmission;
import java.util.ArrayList;

/**
 * A 0-9-1 connection's open channels by number, and the rules for opening one: {@code channel.open} first, no more
 * than the negotiated channel-max (counting the channels open, whatever their numbers, as RabbitMQ does), and the
 * user's {@code max-channels}. Owned by the connection's event loop; not thread-safe.
 */
final class ChannelTable {
    private final Amqp091ConnectionHandler connection;
    private final ConnectionAdmission admission;
    private final IntObjectHashMap<Amqp091Channel> channels = new IntObjectHashMap<>();
    /** The negotiated channel-max; 0: no limit. */
    private int channelMax;

    ChannelTable(Amqp091ConnectionHandler connection, ConnectionAdmission admission, int channelMax) {
        this.connection = connection;
        this.admission = admission;
        this.channelMax = channelMax;
    }

    /** {@code tune-ok} settled the channel-max. */
    void channelMax(int max) {
        this.channelMax = max;
    }

    /** The channel open on {@code number}, or null. */
    Amqp091Channel get(int number) {
        return channels.get(number);
    }

    /** A frame on a channel not open: it must be {@code channel.open}, which is answered with {@code open-ok}. */
    void open(Amqp091Frame frame) throws Amqp091DecodeException {
        int number = frame.channel();
        if (frame.type() != Amqp091Frame.TYPE_METHOD) {
            throw Amqp091Exception.of(ReplyCode.CHANNEL_ERROR, null, "content frame on channel %d, which is not open",
                number);
        }
        Method method = MethodCodec.decode(frame.payload());
        if (!(method instanceof ChannelMethod.Open)) {
            throw Amqp091Exception.of(ReplyCode.CHANNEL_ERROR, method, "expected 'channel.open' on channel %d, got %s",
                number, method.name());
        }
        if (channelMax != 0 && channels.size() >= channelMax) {
            // RabbitMQ counts the channels open, whatever their numbers
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, method,
                "number of channels opened (%d) has reached the negotiated channel_max (%d)", channels.size(),
                channelMax);
        }
        String overLimit = admission.channelOpened();
        if (overLimit != null) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, method, "%s", overLimit);
        }
        channels.put(number, new Amqp091Channel(connection, number, admission.vhost()));
        connection.output().method(number, ChannelMethod.OpenOk.INSTANCE);
    }

    /** The channel's close handshake is over: its number is free. */
    void remove(Amqp091Channel channel) {
        channels.remove(channel.number());
    }

    /** The connection is going: every channel lets go of what it holds. */
    void releaseAll() {
        for (Amqp091Channel channel : new ArrayList<>(channels.values())) {
            channel.release();
        }
        channels.clear();
    }

    /** What the HTTP API shows of the channels, by number. */
    java.util.List<io.skiffmq.server.connection.ChannelInfo> describe() {
        java.util.List<io.skiffmq.server.connection.ChannelInfo> described = new ArrayList<>();
        for (Amqp091Channel channel : channels.values()) {
            described.add(channel.describe());
        }
        described.sort(java.util.Comparator.comparingInt(io.skiffmq.server.connection.ChannelInfo::number));
        return described;
    }

    /** Each channel closes if its oldest unacknowledged delivery is past its consumer timeout. */
    void checkConsumerTimeouts(long now, io.skiffmq.server.config.ConsumerTimeout timeouts,
            io.skiffmq.server.connection.ScopeErrors errors) {
        for (Amqp091Channel channel : new ArrayList<>(channels.values())) {
            channel.checkConsumerTimeout(now, timeouts, errors);
        }
    }

    /** The socket takes more again: consumers held back go on. */
    void writableAgain() {
        for (Amqp091Channel channel : channels.values()) {
            channel.writableAgain();
        }
    }
}
