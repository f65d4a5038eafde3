package io.skiffmq.server.connection;

/**
 * What the HTTP API and {@code list_connections} show of a connection beside its addresses and user, under
 * RabbitMQ's names. Immutable; {@link ConnectionAdmission} replaces it as the handshake goes.
 *
 * @param connectedAt when the socket was accepted, ms since the epoch ({@code connected_at})
 * @param authMechanism the SASL mechanism of the login ({@code auth_mechanism}), null before it or without one
 * @param frameMax the largest frame agreed ({@code frame_max}), 0 before it or for no limit
 * @param channelMax the channels or sessions agreed ({@code channel_max}), 0 before it or for none (streams)
 * @param heartbeatSeconds the heartbeat agreed ({@code timeout}), 0 for none
 */
public record ConnectionDetails(long connectedAt, String authMechanism, long frameMax, int channelMax,
        int heartbeatSeconds) {
}
