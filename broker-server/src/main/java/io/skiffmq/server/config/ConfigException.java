package io.skiffmq.server.config;

/** A setting that stops the broker from starting: unknown, or with a value it does not take; says where it is. */
public final class ConfigException extends IllegalArgumentException {
    public ConfigException(String message) {
        super(message);
    }
}
