package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.server.connection.ConnectionEnd;

/** Which {@link ConnectionEnd} a connection error's condition is, when we close with it. Stateless. */
final class Amqp10Ends {
    private Amqp10Ends() {
    }

    static ConnectionEnd of(AmqpError condition) {
        return switch (condition) {
            case RESOURCE_LIMIT_EXCEEDED -> ConnectionEnd.RESOURCE_LIMIT;
            case UNAUTHORIZED_ACCESS -> ConnectionEnd.ACCESS_REFUSED;
            case CONNECTION_FORCED -> ConnectionEnd.ADMIN_CLOSE;
            case INTERNAL_ERROR -> ConnectionEnd.INTERNAL_ERROR;
            default -> ConnectionEnd.PROTOCOL_ERROR;
        };
    }
}
