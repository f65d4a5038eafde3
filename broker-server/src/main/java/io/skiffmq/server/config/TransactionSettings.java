package io.skiffmq.server.config;


/**
 * The limits on AMQP 1.0 local transactions (docs/transactions.md): how many messages one transaction may hold
 * until its discharge ({@code max-transaction-messages}), and how many bytes of held messages all transactions of
 * one connection may hold together ({@code max-transaction-bytes}). A transfer past either is rejected with
 * {@code amqp:resource-limit-exceeded} and the transaction can only roll back. Listed in {@link #SETTINGS} (joined
 * into {@code Settings.ALL}). Immutable.
 *
 * @param maxMessages messages one transaction holds at most
 * @param maxBytes bytes of messages a connection's transactions hold at most
 */
public record TransactionSettings(int maxMessages, long maxBytes) {
    /** Artemis has no count limit; 10,000 keeps a runaway transaction from holding a queue's worth in memory. */
    public static final int DEFAULT_MAX_MESSAGES = 10_000;
    /** 64 MiB: four times the default {@code max-message-size}, and a bounded share of the heap per connection. */
    public static final long DEFAULT_MAX_BYTES = 64L << 20;

    public TransactionSettings {
        if (maxMessages <= 0) {
            throw new IllegalArgumentException("max-transaction-messages must be > 0");
        }
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("max-transaction-bytes must be > 0");
        }
    }

    public static TransactionSettings defaults() {
        return new TransactionSettings(DEFAULT_MAX_MESSAGES, DEFAULT_MAX_BYTES);
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("max-transaction-messages", "int", "10000", "messages one AMQP 1.0 transaction may hold until"
            + " its discharge; one more is rejected (`amqp:resource-limit-exceeded`) (docs/transactions.md)"),
        Setting.of("max-transaction-bytes", "bytes", "67108864", "bytes of messages the AMQP 1.0 transactions of"
            + " one connection may hold together; past it a transfer is rejected (`amqp:resource-limit-exceeded`)"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a value that is not a number
     */
    public TransactionSettings with(String name, String value) {
        return switch (name) {
            case "max-transaction-messages" -> new TransactionSettings(Integer.parseInt(value), maxBytes);
            case "max-transaction-bytes" -> new TransactionSettings(maxMessages,
                ByteSize.parse(name, value));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
