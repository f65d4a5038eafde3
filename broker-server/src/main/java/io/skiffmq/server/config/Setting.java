package io.skiffmq.server.config;

import java.util.Locale;

/**
 * One broker setting as every source and every document sees it: its name (as in {@code skiffmq.conf}, on the
 * command line as {@code --name=value}, as system property {@code skiffmq.name} and environment variable
 * {@code SKIFFMQ_NAME}), the type of its value, its default and what it means. The value is parsed and checked by
 * {@code BrokerConfig.with} (and the record it belongs to); {@code SettingsTest} holds the two together: every
 * setting listed is parsed, and a literal default parses to the default the broker runs with. Immutable.
 *
 * @param name lower case words joined by {@code -}
 * @param type what the value is, for {@code --help}: {@code int}, {@code bytes}, {@code true|false}, ...
 * @param defaultValue the default as a value the setting accepts, or as words ({@code available processors}) when
 *        {@code literalDefault} is false
 * @param literalDefault true when {@code defaultValue} parses to the default
 * @param meaning one or two sentences; Markdown code spans allowed
 */
public record Setting(String name, String type, String defaultValue, boolean literalDefault, String meaning) {
    /** An optional port that is not set: {@code none}. */
    public static final int NO_PORT = -1;

    public Setting {
        if (!name.matches("[a-z0-9]+(-[a-z0-9]+)*")) {
            throw new IllegalArgumentException("a setting name is lower case words joined by '-': " + name);
        }
    }

    /** A setting whose default is written as a value it accepts. */
    public static Setting of(String name, String type, String defaultValue, String meaning) {
        return new Setting(name, type, defaultValue, true, meaning);
    }

    /** A setting whose default depends on the machine or means "not set": described in words. */
    public static Setting described(String name, String type, String defaultText, String meaning) {
        return new Setting(name, type, defaultText, false, meaning);
    }

    /**
     * A {@code port|none} setting's value: the port, 0 (a free one is picked) or {@link #NO_PORT}.
     *
     * @throws NumberFormatException when it is not a number
     * @throws IllegalArgumentException when it is out of range
     */
    public static int port(String name, String value) {
        int port = value.equals("none") ? NO_PORT : Integer.parseInt(value);
        checkPort(name, port);
        return port;
    }

    /** @throws IllegalArgumentException unless {@code port} is a TCP port, 0 or {@link #NO_PORT} */
    public static void checkPort(String name, int port) {
        if (port < NO_PORT || port > 65535) {
            throw new IllegalArgumentException(name + " must be in [0, 65535] or none");
        }
    }

    /** {@code SKIFFMQ_QUEUE_MEMORY_LIMIT} for {@code queue-memory-limit}. */
    public String environmentName() {
        return "SKIFFMQ_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** {@code skiffmq.queue-memory-limit} for {@code queue-memory-limit}. */
    public String propertyName() {
        return "skiffmq." + name;
    }
}
