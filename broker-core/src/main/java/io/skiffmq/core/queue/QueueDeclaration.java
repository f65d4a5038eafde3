package io.skiffmq.core.queue;

import io.skiffmq.core.message.HeaderValues;
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
        arguments = HeaderValues.copyOf(arguments); // keeps void (null) values
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
        return generateName("amq.gen-");
    }

    /** {@code prefix} and 16 random bytes in base64url, as RabbitMQ makes its names (consumer tags: amq.ctag-). */
    public static String generateName(String prefix) {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        return prefix + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /** True when the queue's definition and durable messages go to disk. */
    public boolean persistent() {
        return durable && !exclusive;
    }

    /**
     * The arguments compared when a queue is declared again, as RabbitMQ compares them
     * ({@code rabbit_amqqueue:declare_args/0}), and SkiffMQ's own {@code x-confirm-after-consume}, which changes what
     * a publisher's confirm means: a publisher that asks for it must not be told yes by a queue without it; and its
     * {@code x-selector} and {@code x-no-local}, which decide what the queue takes (a redeclaration that meant other
     * messages must hear so, not get the first filter silently). Any other argument is kept as first declared and not
     * compared.
     */
    public static final java.util.Set<String> COMPARED_ARGUMENTS = java.util.Set.of("x-expires", "x-message-ttl",
        "x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy", "x-max-length",
        "x-max-length-bytes", "x-max-in-memory-length", "x-max-in-memory-bytes", "x-max-priority", "x-overflow",
        "x-queue-mode", "x-queue-version", "x-single-active-consumer", "x-queue-type", "x-quorum-initial-group-size",
        "x-quorum-target-group-size", "x-delivery-limit", "x-max-age", "x-stream-max-segment-size-bytes",
        "x-stream-filter-size-bytes", "x-initial-cluster-size", "x-queue-leader-locator",
        QueueArguments.CONFIRM_AFTER_CONSUME, io.skiffmq.core.filter.SubscriptionFilter.SELECTOR_ARGUMENT,
        io.skiffmq.core.filter.SubscriptionFilter.NO_LOCAL_ARGUMENT);

    /** Same properties, whatever the name. */
    public boolean equivalent(QueueDeclaration other) {
        return durable == other.durable && exclusive == other.exclusive && autoDelete == other.autoDelete
            && differingArgument(other) == null;
    }

    /**
     * The first compared argument (by name) whose value differs, or null. Integers compare by value whatever their
     * width, a void (null) value differs from none, and no {@code x-queue-type} means {@code classic}, as in
     * RabbitMQ.
     */
    public String differingArgument(QueueDeclaration other) {
        java.util.TreeSet<String> keys = new java.util.TreeSet<>();
        for (String key : arguments.keySet()) {
            if (COMPARED_ARGUMENTS.contains(key)) {
                keys.add(key);
            }
        }
        for (String key : other.arguments.keySet()) {
            if (COMPARED_ARGUMENTS.contains(key)) {
                keys.add(key);
            }
        }
        for (String key : keys) {
            boolean presenceDiffers = arguments.containsKey(key) != other.arguments.containsKey(key);
            if (presenceDiffers && !key.equals("x-queue-type") // a void value is not no value
                    || !sameValue(key, arguments.get(key), other.arguments.get(key))) {
                return key;
            }
        }
        return null;
    }

    private static boolean sameValue(String key, Object a, Object b) {
        if (key.equals("x-queue-type")) {
            a = a == null ? "classic" : a.toString();
            b = b == null ? "classic" : b.toString();
        }
        if (a instanceof Number x && b instanceof Number y && integral(x) && integral(y)) {
            return x.longValue() == y.longValue();
        }
        return java.util.Objects.equals(a, b);
    }

    private static boolean integral(Number n) {
        return n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte;
    }

    /** As a refusal describes the existing queue: "durable, exclusive, auto-delete with arguments {…}". */
    public String describe() {
        return (durable ? "durable" : "transient") + (exclusive ? ", exclusive" : "")
            + (autoDelete ? ", auto-delete" : "") + " with arguments " + arguments;
    }
}
