package io.skiffmq.server.http;

import java.net.InetSocketAddress;

/**
 * A bound listener of the broker, as the overview lists it and the port-listener health check looks for it.
 *
 * @param protocol RabbitMQ's name for it: {@code amqp}, {@code amqp/ssl}, {@code http}
 */
public record Listener(String protocol, InetSocketAddress address) {
}
