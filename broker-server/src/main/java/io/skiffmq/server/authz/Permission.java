package io.skiffmq.server.authz;

/** The three kinds of access RabbitMQ grants on a resource; the name is how its refusals spell it. */
public enum Permission {
    /** Creating, deleting or changing a resource. */
    CONFIGURE,
    /** Putting messages into it (publishing; a binding's destination). */
    WRITE,
    /** Taking messages out of it (consuming, getting, purging; a binding's source). */
    READ;

    /** As RabbitMQ writes it in a refusal: {@code configure}, {@code write}, {@code read}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
