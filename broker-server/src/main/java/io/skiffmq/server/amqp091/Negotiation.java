package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.FieldTable;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.server.auth.Credentials;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.config.BrokerConfig;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the broker offers and accepts in a 0-9-1 handshake, as RabbitMQ does: {@code connection.start} (server
 * properties with RabbitMQ's capabilities table, the mechanisms), the login in {@code start-ok} (PLAIN, AMQPLAIN,
 * ANONYMOUS, EXTERNAL: read here, checked by the {@link SaslAuthenticator} off the loop), and
 * {@code tune}/{@code tune-ok} (channel-max, frame-max at least RabbitMQ 4.1's 8192, heartbeat). Rules only: the
 * connection does the talking. Stateless after construction; one per connection.
 */
final class Negotiation {
    /** RabbitMQ's frame-min-size (4.1 raised it from 4096): frame-max may not be lower. */
    static final int FRAME_MIN = Amqp091FrameDecoder.DEFAULT_FRAME_MAX;
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

    /**
     * @param peer the verified TLS client certificate, or null: EXTERNAL is offered only with one
     * @param clusterName RabbitMQ's {@code cluster_name} server property
     */
    ConnectionMethod.Start start(X509Certificate peer, String clusterName) {
        Map<String, Object> capabilities = new LinkedHashMap<>();
        for (String capability : CAPABILITIES) {
            capabilities.put(capability, true);
        }
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("capabilities", capabilities);
        properties.put("cluster_name", clusterName);
        properties.put("product", "SkiffMQ");
        properties.put("version", config.rabbitmqVersion());
        properties.put("skiffmq-version", BrokerConfig.SKIFFMQ_VERSION);
        properties.put("platform", "Java " + Runtime.version().feature());
        properties.put("information", "Licensed under the Apache License 2.0");
        StringBuilder mechanisms = new StringBuilder("PLAIN AMQPLAIN");
        if (sasl.anonymousOffered()) {
            mechanisms.append(' ').append(SaslAuthenticator.ANONYMOUS);
        }
        if (peer != null) {
            mechanisms.append(' ').append(SaslAuthenticator.EXTERNAL);
        }
        return new ConnectionMethod.Start(0, 9, properties, mechanisms.toString(), "en_US");
    }

    /**
     * What {@code start-ok} claims, read on the loop; {@link SaslAuthenticator#login} checks it off the loop.
     *
     * @param peer the verified TLS client certificate, or null
     * @throws Amqp091Exception 503 for a mechanism we do not offer
     */
    Credentials credentials(ConnectionMethod.StartOk startOk, X509Certificate peer) {
        String mechanism = startOk.mechanism();
        byte[] response = startOk.response() == null ? null : startOk.response().toArray();
        Credentials credentials = "AMQPLAIN".equals(mechanism) ? amqplain(response)
            : sasl.read(mechanism, response, peer);
        if (credentials == null) {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, startOk,
                "unknown authentication mechanism '%s'", mechanism);
        }
        return credentials;
    }

    /** AMQPLAIN's response is a field table without its length: {@code LOGIN} and {@code PASSWORD}. */
    private static Credentials amqplain(byte[] response) {
        if (response == null) {
            return new Credentials("AMQPLAIN", null, null);
        }
        ByteBuf table = Unpooled.buffer(response.length + 4).writeInt(response.length).writeBytes(response);
        try {
            Map<String, Object> entries = FieldTable.readTable(table);
            return entries.get("LOGIN") instanceof String login && entries.get("PASSWORD") instanceof String password
                ? new Credentials("AMQPLAIN", login, password) : new Credentials("AMQPLAIN", null, null);
        } catch (Amqp091DecodeException e) {
            return new Credentials("AMQPLAIN", null, null);
        } finally {
            table.release();
        }
    }

    /**
     * How a refused login is told: 403 ACCESS_REFUSED, whatever the reason, since before {@code tune-ok} RabbitMQ
     * sends no other close; the text is RabbitMQ's for bad credentials, says why for a loopback-only user, and
     * says to try again later otherwise.
     */
    static Amqp091Exception refusal(ConnectionMethod.StartOk startOk, LoginResult result) {
        String mechanism = startOk.mechanism();
        return switch (result.refusal()) {
            case CREDENTIALS -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, startOk,
                "Login was refused using authentication mechanism %s. For details see the broker logfile.",
                mechanism);
            // rabbit_reader's own explanation, which it logs; said to the client too, who had the password right
            case LOOPBACK_ONLY -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, startOk, "%s login refused: %s",
                mechanism, result.reason());
            case RATE_LIMITED -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, startOk,
                "Login was refused using authentication mechanism %s: too many failed logins from this address, "
                    + "try again later.", mechanism);
            case BUSY -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, startOk,
                "Login was refused using authentication mechanism %s: the broker's authentication is busy, "
                    + "try again later.", mechanism);
        };
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
