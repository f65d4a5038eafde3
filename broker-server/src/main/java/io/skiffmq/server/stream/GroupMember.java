package io.skiffmq.server.stream;

/**
 * A member of a single active consumer group as listings show it (RabbitMQ's {@code list_stream_group_consumers}):
 * the group's name, the subscription's id on its connection, the connection's name, and whether it is the active
 * one (else it waits). Immutable.
 */
public record GroupMember(String name, int subscriptionId, String connection, boolean active) {
}
