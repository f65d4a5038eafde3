package io.skiffmq.server.stream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.skiffmq.codec.stream.Command;
import io.skiffmq.codec.stream.ConnectionCommand;
import io.skiffmq.codec.stream.ConnectionCommand.Open;
import io.skiffmq.codec.stream.ConnectionCommand.PeerProperties;
import io.skiffmq.codec.stream.ConnectionCommand.SaslAuthenticate;
import io.skiffmq.codec.stream.ConnectionCommand.SaslHandshake;
import io.skiffmq.codec.stream.ConnectionCommand.Tune;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.codec.stream.StreamFrameDecoder;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.auth.Credentials;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.auth.PeerAddress;
import io.skiffmq.server.auth.PeerCertificate;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.authz.OverLimit;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ConnectionAdmission;
import io.skiffmq.server.connection.ConnectionEnd;
import io.skiffmq.server.connection.HandshakeDeadline;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A stream connection's handshake, as RabbitMQ's reader takes it ({@code rabbit_stream_reader}, states
 * {@code tcp_connected} to {@code opened}), within the handshake timeout: peer properties (answered with ours, whose
 * {@code version} is the RabbitMQ feature level, 3.11 or later so the Java client exchanges command versions), the
 * SASL handshake (the mechanisms) and authenticate (checked off the loop, reading suspended meanwhile), then our
 * {@code tune}, the client's answer, and {@code open} of a virtual host (its limits and the user's access checked),
 * answered with the {@code advertised_host} and {@code advertised_port} that {@code metadata} lists too. Also the
 * re-authentication of an open connection (SASL authenticate after open).
 *
 * <p>Failures as RabbitMQ's: an unknown mechanism (0x07), a malformed response (0x09) or a loopback-only user (0x0b)
 * are answered and the socket closed; refused credentials (0x08) and a refused {@code open} (0x0c) are answered
 * {@link StreamConnectionHandler#SILENT_CLOSE_DELAY_MILLIS} later, then the socket closed (RabbitMQ's "silent
 * close", which slows down guessing). Anything out of turn closes the socket without a word.
 *
 * <p>Stages: {@code PEER_PROPERTIES} → {@code SASL_HANDSHAKE} → {@code AUTHENTICATE} → {@code TUNE} → {@code OPEN}
 * → {@code DONE}. Owned by the connection's event loop; not thread-safe.
 */
final class StreamHandshake {
    private enum Stage { PEER_PROPERTIES, SASL_HANDSHAKE, AUTHENTICATE, TUNE, OPEN, DONE }

    private final StreamConnectionHandler connection;
    private final ChannelHandlerContext ctx;
    private final SaslAuthenticator sasl;
    private final ConnectionAdmission admission;
    private final StreamSettings settings;
    private final BrokerConfig config;
    private Stage stage = Stage.PEER_PROPERTIES;
    private ScheduledFuture<?> timeout;
    /** The verified TLS client certificate, or null; read once TLS is done, at the first frame. */
    private X509Certificate peer;
    private Map<String, String> clientProperties = Map.of();
    /** The mechanism of the first login: a re-authentication must use it too. */
    private String mechanism;
    private boolean authenticating;
    private long frameMax;
    private int heartbeatSeconds;

    StreamHandshake(StreamConnectionHandler connection, ChannelHandlerContext ctx, SaslAuthenticator sasl,
            ConnectionAdmission admission, BrokerConfig config) {
        this.connection = connection;
        this.ctx = ctx;
        this.sasl = sasl;
        this.admission = admission;
        this.config = config;
        this.settings = config.stream();
    }

    /** The connection is active: the handshake timeout runs. */
    void start() {
        timeout = HandshakeDeadline.schedule(ctx.channel(), config.handshakeTimeoutMillis(), () -> {
            if (stage != Stage.DONE && connection.end(ConnectionEnd.HANDSHAKE_TIMEOUT,
                    "handshake not done within " + config.handshakeTimeoutMillis() + " ms")) {
                connection.closeSocket();
            }
        });
    }

    void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    /** What the client said in its peer properties ({@code connection_name}, {@code product}…). */
    Map<String, String> clientProperties() {
        return clientProperties;
    }

    int heartbeatSeconds() {
        return heartbeatSeconds;
    }

    /**
     * A command before the connection is open; anything out of turn ends it without an answer.
     *
     * @return false when it was out of turn (the caller closes the socket)
     */
    boolean onCommand(Command command) {
        if (command instanceof ConnectionCommand.Heartbeat) {
            return true;
        }
        if (authenticating) {
            return false; // a pipelined frame while the login is checked: the client jumped ahead
        }
        switch (stage) {
            case PEER_PROPERTIES -> {
                if (!(command instanceof PeerProperties properties)) {
                    return false;
                }
                // the first frame comes after the TLS handshake: the client's certificate, if any, is known now
                peer = PeerCertificate.of(ctx.channel());
                clientProperties = properties.properties();
                connection.respond(new ConnectionCommand.PeerPropertiesResponse(properties.correlationId(),
                    ResponseCode.OK, serverProperties()));
                stage = Stage.SASL_HANDSHAKE;
            }
            case SASL_HANDSHAKE -> {
                if (!(command instanceof SaslHandshake handshake)) {
                    return false;
                }
                connection.respond(new ConnectionCommand.SaslHandshakeResponse(handshake.correlationId(),
                    ResponseCode.OK, java.util.List.of(sasl.mechanismNames(peer))));
                stage = Stage.AUTHENTICATE;
            }
            case AUTHENTICATE -> {
                if (!(command instanceof SaslAuthenticate authenticate)) {
                    return false;
                }
                authenticate(authenticate, false);
            }
            case TUNE -> {
                if (!(command instanceof Tune tune)) {
                    return false;
                }
                tuned(tune);
            }
            case OPEN -> {
                if (!(command instanceof Open open)) {
                    return false;
                }
                open(open);
            }
            default -> throw new IllegalStateException(stage.toString());
        }
        return true;
    }

    /** Our peer properties, RabbitMQ's keys, with our own product and version beside the feature level. */
    private Map<String, String> serverProperties() {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("product", "SkiffMQ");
        properties.put("version", config.rabbitmqVersion());
        properties.put("skiffmq-version", BrokerConfig.SKIFFMQ_VERSION);
        properties.put("cluster_name", connection.clusterName());
        properties.put("platform", "Java " + Runtime.version().feature());
        properties.put("copyright", "Copyright (c) the SkiffMQ authors");
        properties.put("information", "Licensed under the Apache License 2.0");
        return properties;
    }

    /**
     * A login, first or again (after open, to refresh the credentials: same mechanism, same user). Read here,
     * checked off the loop; the answer comes back here.
     */
    void authenticate(SaslAuthenticate authenticate, boolean again) {
        long corr = authenticate.correlationId();
        if (again && !authenticate.mechanism().equals(mechanism)) {
            connection.refuseSilently(new ConnectionCommand.SaslAuthenticateResponse(corr,
                ResponseCode.SASL_CANNOT_CHANGE_MECHANISM, null), ConnectionEnd.AUTH_FAILURE,
                "cannot change the authentication mechanism '" + mechanism + "' for '" + authenticate.mechanism()
                    + "'");
            return;
        }
        byte[] response = authenticate.response() == null ? null : authenticate.response().toArray();
        Credentials credentials = sasl.read(authenticate.mechanism(), response, peer);
        if (credentials == null) {
            connection.refuse(new ConnectionCommand.SaslAuthenticateResponse(corr,
                ResponseCode.SASL_MECHANISM_NOT_SUPPORTED, null), ConnectionEnd.AUTH_FAILURE,
                "authentication mechanism '" + authenticate.mechanism() + "' not supported");
            return;
        }
        if (credentials.user() == null) {
            connection.refuse(new ConnectionCommand.SaslAuthenticateResponse(corr, ResponseCode.SASL_ERROR, null),
                ConnectionEnd.AUTH_FAILURE, "malformed " + credentials.mechanism() + " response");
            return;
        }
        authenticating = true;
        connection.await(sasl.login(credentials, PeerAddress.of(ctx.channel())), result -> {
            authenticating = false;
            loggedIn(corr, credentials, result, again);
        });
    }

    private void loggedIn(long corr, Credentials credentials, LoginResult result, boolean again) {
        if (!result.succeeded()) {
            ConnectionCommand.SaslAuthenticateResponse refusal = new ConnectionCommand.SaslAuthenticateResponse(
                corr, result.refusal() == LoginResult.Refusal.LOOPBACK_ONLY
                    ? ResponseCode.SASL_AUTHENTICATION_FAILURE_LOOPBACK : ResponseCode.AUTHENTICATION_FAILURE,
                null);
            String detail = "authentication failed (" + credentials.mechanism() + "): " + result.reason();
            if (result.refusal() == LoginResult.Refusal.LOOPBACK_ONLY) {
                connection.refuse(refusal, ConnectionEnd.AUTH_FAILURE, detail);
            } else {
                connection.refuseSilently(refusal, ConnectionEnd.AUTH_FAILURE, detail);
            }
            return;
        }
        if (again) {
            reauthenticated(corr, result.user());
            return;
        }
        mechanism = credentials.mechanism();
        admission.loggedIn(result.user(), mechanism);
        connection.respond(new ConnectionCommand.SaslAuthenticateResponse(corr, ResponseCode.OK, null));
        connection.respond(new Tune(settings.frameMax(), settings.heartbeatSeconds(), false));
        stage = Stage.TUNE;
    }

    /**
     * RabbitMQ's {@code complete_secret_update}: the same user may refresh its credentials, and must still have
     * access to the virtual host; its publishers and subscriptions that lost their permission go.
     */
    private void reauthenticated(long corr, String user) {
        if (!user.equals(admission.user())) {
            connection.refuseSilently(new ConnectionCommand.SaslAuthenticateResponse(corr,
                ResponseCode.SASL_CANNOT_CHANGE_USERNAME, null), ConnectionEnd.AUTH_FAILURE,
                "not allowed to change username '" + admission.user() + "'");
            return;
        }
        String vhost = admission.access().vhost();
        if (!admission.mayAccess(vhost)) {
            connection.refuseSilently(new ConnectionCommand.SaslAuthenticateResponse(corr,
                ResponseCode.VIRTUAL_HOST_ACCESS_FAILURE, null), ConnectionEnd.ACCESS_REFUSED,
                "no longer has access to vhost '" + vhost + "' after a secret update");
            return;
        }
        connection.respond(new ConnectionCommand.SaslAuthenticateResponse(corr, ResponseCode.OK, null));
        connection.uses().permissionsChanged();
    }

    /**
     * The client's answer to our tune: frame-max (0 on either side: the other's) applies after {@code open}, the
     * heartbeat is the client's (the smaller of both, or 0 for none).
     */
    private void tuned(Tune tune) {
        frameMax = tune.frameMax() == 0 ? settings.frameMax()
            : settings.frameMax() == 0 ? tune.frameMax() : Math.min(tune.frameMax(), settings.frameMax());
        heartbeatSeconds = (int) Math.min(Integer.MAX_VALUE / 2000, tune.heartbeat());
        if (heartbeatSeconds > 0) {
            // as rabbit_heartbeat: a heartbeat every half interval without writes; silent for two intervals is gone
            ctx.pipeline().addBefore(ctx.name(), "idle", new IdleStateHandler(heartbeatSeconds * 2L * 1000,
                heartbeatSeconds * 1000L / 2, 0, TimeUnit.MILLISECONDS));
        }
        stage = Stage.OPEN;
    }

    /**
     * {@code open}: as {@code rabbit_stream_reader} checks it, the virtual host exists, then its connection limit
     * and the user's, then the user's access. A refusal is 0x0c, answered late (silent close).
     */
    private void open(Open open) {
        String name = open.virtualHost();
        VirtualHost found = admission.find(name);
        if (found == null) {
            refuseOpen(open, "vhost '" + name + "' not found");
            return;
        }
        OverLimit overLimit = admission.count(name);
        if (overLimit != null) {
            refuseOpen(open, overLimit.amqp10());
            return;
        }
        if (!admission.mayAccess(name)) {
            admission.uncount(name);
            refuseOpen(open, "access refused for user '" + admission.user() + "' to vhost '" + name + "'");
            return;
        }
        admission.admitted(found, name);
        cancelTimeout();
        stage = Stage.DONE;
        ctx.pipeline().get(StreamFrameDecoder.class).frameMax(frameMax);
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("advertised_host", connection.advertisedHost());
        properties.put("advertised_port", Long.toString(connection.advertisedPort()));
        connection.respond(new ConnectionCommand.OpenResponse(open.correlationId(), ResponseCode.OK, properties));
        admission.tuned(frameMax, 0, heartbeatSeconds);
        connection.opened(frameMax);
    }

    private void refuseOpen(Open open, String why) {
        connection.refuseSilently(new ConnectionCommand.OpenResponse(open.correlationId(),
            ResponseCode.VIRTUAL_HOST_ACCESS_FAILURE, Map.of()), ConnectionEnd.ACCESS_REFUSED,
            "opening connection failed: " + why);
    }
}
