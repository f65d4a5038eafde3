package io.skiffmq.server.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@code skiffmq.conf}, in the {@code key = value} style of RabbitMQ's {@code rabbitmq.conf}: one setting a
 * line, blank lines and lines whose first non-blank character is {@code #} ignored, spaces around key and value
 * dropped. Keys are {@link Settings} names ({@code queue-memory-limit = 1GiB}); a later line wins over an earlier
 * one. A value may hold {@code #} (a password): comments are whole lines. Stateless.
 */
public final class ConfigFile {
    private ConfigFile() {
    }

    /**
     * The file's settings in file order, each with {@code path:line} as its origin; names are not checked here.
     *
     * @throws ConfigException when the file cannot be read or a line is not {@code key = value}
     */
    public static List<SettingValue> read(Path path) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + path + ": " + e);
        }
        List<SettingValue> values = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            String origin = path + ":" + (i + 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new ConfigException(origin + ": expected 'key = value', got '" + line + "'");
            }
            values.add(new SettingValue(line.substring(0, eq).strip(), line.substring(eq + 1).strip(), origin));
        }
        return values;
    }
}
