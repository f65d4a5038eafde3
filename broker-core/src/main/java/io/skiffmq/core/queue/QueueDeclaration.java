package io.skiffmq.core.queue;

import java.util.Map;

/**
 * What a queue was declared as. Two declarations of one name are equivalent when every field but the name agrees.
 *
 * @param durable the queue and its durable messages survive a restart (never for an exclusive queue, whose
 *        connection does not survive one: it is kept in memory whatever the flag says)
 * @param exclusive belongs to the connection that declared it, and is deleted when that connection closes
 * @param autoDelete deleted when its last consumer leaves (once it has had one)
 * @param arguments the {@code x-} arguments, kept to report and to compare redeclarations with
 */
public record QueueDeclaration(String name, boolean durable, boolean exclusive, boolean autoDelete,
        Map<String, Object> arguments) {

    public QueueDeclaration {
        arguments = arguments == null ? Map.of() : Map.copyOf(arguments);
    }

    /** A plain queue: neither exclusive nor auto-delete. */
    public static QueueDeclaration of(String name, boolean durable, Map<String, Object> arguments) {
        return new QueueDeclaration(name, durable, false, false, arguments);
    }

    /**
     * A fresh server-generated name, as RabbitMQ makes them: {@code amq.gen-} and 16 random bytes in base64url,
     * for queues whose client asked the server to name them (0-9-1 empty names, AMQP 1.0 dynamic nodes).
     */
    public static String generateName() {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        return "amq.gen-" + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /** True when the queue's definition and durable messages go to disk. */
    public boolean persistent() {
        return durable && !exclusive;
    }

    /** Same properties, whatever the name. */
    public boolean equivalent(QueueDeclaration other) {
        return durable == other.durable && exclusive == other.exclusive && autoDelete == other.autoDelete
            && arguments.equals(other.arguments);
    }
}
