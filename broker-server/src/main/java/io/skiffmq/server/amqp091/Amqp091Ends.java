package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.server.connection.ConnectionEnd;

/** Which {@link ConnectionEnd} a hard error's reply code is, when we close the connection with it. Stateless. */
final class Amqp091Ends {
    private Amqp091Ends() {
    }

    static ConnectionEnd of(ReplyCode code) {
        return switch (code) {
            case CONNECTION_FORCED -> ConnectionEnd.ADMIN_CLOSE;
            case ACCESS_REFUSED -> ConnectionEnd.AUTH_FAILURE; // at the login: channels' 403s close only them
            case NOT_ALLOWED -> ConnectionEnd.ACCESS_REFUSED; // connection.open's virtual host, or its limits
            case RESOURCE_ERROR -> ConnectionEnd.RESOURCE_LIMIT;
            case INTERNAL_ERROR -> ConnectionEnd.INTERNAL_ERROR;
            default -> ConnectionEnd.PROTOCOL_ERROR;
        };
    }
}
