package io.skiffmq.server.logging;

import io.skiffmq.server.config.Setting;
import java.util.List;
import java.util.Locale;

/**
 * How the broker logs: the level of the root logger and the layout of each line (docs/configuration.md). Applied once
 * by {@link LogSetup} when {@code SkiffMq} starts; a broker embedded in tests keeps the logging its host set up.
 * Immutable.
 *
 * @param level {@code log-level}: {@code error}, {@code warn}, {@code info}, {@code debug} or {@code trace}
 * @param format {@code log-format}: {@code text} (one line per event) or {@code json} (one JSON object per line)
 */
public record LogSettings(String level, Format format) {

    /** The layout of a log line. */
    public enum Format { TEXT, JSON }

    public static final List<Setting> SETTINGS = List.of(
        Setting.of("log-level", "error|warn|info|debug|trace", "info", "the lowest level logged, for our logs,"
            + " Netty's and Chronicle's alike"),
        Setting.of("log-format", "text|json", "text", "`text`: one line per event (time, level, logger, message);"
            + " `json`: one JSON object per line for log pipelines (docs/configuration.md)"));

    private static final List<String> LEVELS = List.of("error", "warn", "info", "debug", "trace");

    public LogSettings {
        if (!LEVELS.contains(level)) {
            throw new IllegalArgumentException("log-level must be one of " + String.join(", ", LEVELS) + ", got "
                + level);
        }
        if (format == null) {
            throw new IllegalArgumentException("log-format must be text or json");
        }
    }

    public static LogSettings defaults() {
        return new LogSettings("info", Format.TEXT);
    }

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /** These settings with one changed. */
    public LogSettings with(String name, String value) {
        return switch (name) {
            case "log-level" -> new LogSettings(value.toLowerCase(Locale.ROOT), format);
            case "log-format" -> new LogSettings(level, switch (value) {
                case "text" -> Format.TEXT;
                case "json" -> Format.JSON;
                default -> throw new IllegalArgumentException("log-format must be text or json, got " + value);
            });
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
