package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.FieldTable;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.server.BrokerConfig;
import io.skiffmq.server.auth.SaslAuthenticator;
import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the broker offers and accepts in a 0-9-1 handshake, as RabbitMQ does: {@code connection.start} (server
 * properties with RabbitMQ's capabilities table, the mechanisms), the login in {@code start-ok} (PLAIN, AMQPLAIN,
 * ANONYMOUS), and {@code tune}/{@code tune-ok} (channel-max, frame-max at least RabbitMQ 4.1's 8192, heartbeat).
 * Rules only: the connection does the talking. Stateless after construction; one per connection.
 */
final class Negotiation {
    /** RabbitMQ's frame-min-size (4.1 raised it from 4096): frame-max may not be lower. */
    static final int FRAME_MIN = Amqp091FrameDecoder.DEFAULT_FRAME_MAX;
    private static final String SKIFFMQ_VERSION = "0.1.0";
    private static final String[] CAPABILITIES = {"publisher_confirms", "exchange_exchange_bindings", "basic.nack",
        "consumer_cancel_notify", "connection.blocked", "consumer_priorities", "authentication_failure_close",
        "per_consumer_qos", "direct_reply_to"};

    private final BrokerConfig config;
    private final SaslAuthenticator sasl;
    private final int frameMax;

    Negotiation(BrokerConfig config, SaslAuthenticator sasl) {
        this.config = config;
        this.sasl = sasl;
        this.frameMax = Math.max(FRAME_MIN, config.maxFrameSize());
    }

    ConnectionMethod.Start start() {
        Map<String, Object> capabilities = new LinkedHashMap<>();
        for (String capability : CAPABILITIES) {
            capabilities.put(capability, true);
        }
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("capabilities", capabilities);
        properties.put("cluster_name", config.node());
        properties.put("product", "SkiffMQ");
        properties.put("version", config.rabbitmqVersion());
        properties.put("skiffmq-version", SKIFFMQ_VERSION);
        properties.put("platform", "Java " + Runtime.version().feature());
        properties.put("information", "Licensed under the Apache License 2.0");
        String mechanisms = sasl.anonymousOffered() ? "PLAIN AMQPLAIN ANONYMOUS" : "PLAIN AMQPLAIN";
        return new ConnectionMethod.Start(0, 9, properties, mechanisms, "en_US");
    }

    /**
     * The user {@code start-ok} logs in as, or null when the login is refused.
     *
     * @throws Amqp091Exception 503 for a mechanism we do not offer
     */
    String authenticate(ConnectionMethod.StartOk startOk, InetAddress remote) {
        String mechanism = startOk.mechanism();
        byte[] response = startOk.response() == null ? null : startOk.response().toArray();
        return switch (mechanism) {
            case "PLAIN" -> sasl.authenticate(mechanism, response, remote);
            case "ANONYMOUS" -> sasl.anonymousOffered() ? sasl.authenticate(mechanism, response, remote) : null;
            case "AMQPLAIN" -> amqplain(response, remote);
            default -> throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, startOk,
                "unknown authentication mechanism '%s'", mechanism);
        };
    }

    /** AMQPLAIN's response is a field table without its length: {@code LOGIN} and {@code PASSWORD}. */
    private String amqplain(byte[] response, InetAddress remote) {
        if (response == null) {
            return null;
        }
        ByteBuf table = Unpooled.buffer(response.length + 4).writeInt(response.length).writeBytes(response);
        try {
            Map<String, Object> entries = FieldTable.readTable(table);
            return entries.get("LOGIN") instanceof String login && entries.get("PASSWORD") instanceof String password
                ? sasl.password(login, password, remote) : null;
        } catch (Amqp091DecodeException e) {
            return null;
        } finally {
            table.release();
        }
    }

    /** {@code connection.update-secret}: the new secret is checked as the user's password. */
    boolean secretAccepted(String user, ConnectionMethod.UpdateSecret update, InetAddress remote) {
        String secret = new String(update.newSecret().toArray(), java.nio.charset.StandardCharsets.UTF_8);
        return sasl.password(user, secret, remote) != null;
    }

    ConnectionMethod.Tune tune() {
        return new ConnectionMethod.Tune(config.channelMax(), frameMax, config.heartbeatSeconds());
    }

    /** Checks the client's {@code tune-ok} against our {@link #tune}; RabbitMQ's texts. */
    void checkTuneOk(ConnectionMethod.TuneOk tuneOk) {
        // 0 means "no limit", which is above ours: RabbitMQ refuses it (rabbit_reader:validate_negotiated_integer_value)
        int channelMax = config.channelMax();
        if (channelMax != 0 && (tuneOk.channelMax() == 0 || tuneOk.channelMax() > channelMax)) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, tuneOk,
                "negotiated channel_max = %d is higher than the maximum allowed value (%d)", tuneOk.channelMax(),
                channelMax);
        }
        if (tuneOk.frameMax() < FRAME_MIN) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, tuneOk,
                "negotiated frame_max = %d is lower than the minimum allowed value (%d)", tuneOk.frameMax(), FRAME_MIN);
        }
        if (tuneOk.frameMax() > frameMax) {
            throw Amqp091Exception.of(ReplyCode.NOT_ALLOWED, tuneOk,
                "negotiated frame_max = %d is higher than the maximum allowed value (%d)", tuneOk.frameMax(), frameMax);
        }
    }
}
