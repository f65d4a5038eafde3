package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.server.config.BrokerConfig;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * What the broker offers and accepts in an AMQP 1.0 {@code open} [2.7.1], as RabbitMQ 4 does: the virtual host
 * named by the hostname, the frame size and channel-max agreed from both sides' limits, the idle timeouts [2.4.5],
 * and our {@code open} (container, limits, {@code ANONYMOUS-RELAY}, the management link pair and
 * {@code SHARED-SUBS}, product properties). Rules only: the connection does the talking. Stateless after
 * construction; one per connection.
 */
final class OpenNegotiation {
    private static final Symbol ANONYMOUS_RELAY = Symbol.valueOf("ANONYMOUS-RELAY");
    /** The management node's link pair (RabbitMQ's capability name). */
    private static final Symbol LINK_PAIR = Symbol.valueOf("LINK_PAIR_V1_0");
    /** JMS 2.0 shared subscriptions ({@link TopicSubscriptions}): Qpid JMS refuses to create one without it. */
    static final Symbol SHARED_SUBS = Symbol.valueOf("SHARED-SUBS");

    private final BrokerConfig config;

    OpenNegotiation(BrokerConfig config) {
        this.config = config;
    }

    /** RabbitMQ 4: "vhost:NAME" names the virtual host; any other hostname (or none) means the default one. */
    static String vhostName(Open open) {
        String hostname = open.getHostname();
        return hostname != null && hostname.startsWith("vhost:") ? hostname.substring(6) : "/";
    }

    /** The largest frame the peer accepts, within ours and no lower than the spec's minimum. */
    int remoteMaxFrameSize(Open open) {
        int remote = open.getMaxFrameSize() == null ? Integer.MAX_VALUE
            : (int) Math.min(Integer.MAX_VALUE, open.getMaxFrameSize().longValue());
        return Math.max(Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE, Math.min(remote, config.maxFrameSize()));
    }

    /** The highest channel either side allows. */
    int channelMax(Open open) {
        return Math.min(config.channelMax(), open.getChannelMax() == null ? 65535 : open.getChannelMax().intValue());
    }

    /** Our {@code open}, answering the peer's. */
    /** @param clusterName our container id and {@code cluster_name}, as RabbitMQ 4's {@code rabbit_amqp_reader} */
    Open ours(int channelMax, String clusterName) {
        Open ours = new Open();
        ours.setContainerId(clusterName);
        ours.setMaxFrameSize(UnsignedInteger.valueOf(config.maxFrameSize()));
        ours.setChannelMax(UnsignedShort.valueOf((short) channelMax));
        if (config.idleTimeoutMillis() > 0) {
            ours.setIdleTimeOut(UnsignedInteger.valueOf(config.idleTimeoutMillis()));
        }
        ours.setOfferedCapabilities(ANONYMOUS_RELAY, LINK_PAIR, SHARED_SUBS);
        ours.setProperties(Map.of(Symbol.valueOf("product"), "SkiffMQ", Symbol.valueOf("version"),
            config.rabbitmqVersion(), Symbol.valueOf("skiffmq-version"), BrokerConfig.SKIFFMQ_VERSION,
            Symbol.valueOf("node"), config.node(), Symbol.valueOf("cluster_name"), clusterName));
        return ours;
    }

    /** The {@code open} sent only to be followed by an error {@code close} [2.4.2]: our container id alone. */
    Open beforeClose(String clusterName) {
        Open open = new Open();
        open.setContainerId(clusterName);
        return open;
    }

    /**
     * [2.4.5] heartbeats at half the peer's timeout; close after our own timeout of silence. Null when neither side
     * has a timeout.
     */
    Heartbeats idleHandler(Open open) {
        long peerTimeout = open.getIdleTimeOut() == null ? 0 : open.getIdleTimeOut().longValue();
        if (peerTimeout > 0 || config.idleTimeoutMillis() > 0) {
            return new Heartbeats(config.idleTimeoutMillis(), peerTimeout / 2);
        }
        return null;
    }
}
