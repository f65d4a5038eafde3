package io.skiffmq.codec.stream;

/**
 * A request or response that carries a correlation id (a uint32), which the response echoes. Every command record
 * but the one-way ones (heartbeat, metadata update), tune and the credit response has one, so a connection can
 * answer a request it refuses without knowing its type.
 */
public interface Correlated {
    long correlationId();
}
