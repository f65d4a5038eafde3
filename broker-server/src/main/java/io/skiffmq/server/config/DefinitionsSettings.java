package io.skiffmq.server.config;

import io.skiffmq.store.definitions.ChangeLog;

/**
 * When a definitions change log (the broker's, and each virtual host's: docs/storage.md) is compacted into a new
 * snapshot: once it has grown past {@code definitions-compaction-ratio} times the snapshot and past
 * {@code definitions-compaction-min-bytes}. Listed in {@link #SETTINGS} (joined into {@code Settings.ALL}).
 * Immutable.
 */
public record DefinitionsSettings(double ratio, long minLogBytes) {
    public DefinitionsSettings {
        // checked where they are used
        compaction(ratio, minLogBytes);
    }

    public static DefinitionsSettings defaults() {
        ChangeLog.Compaction d = ChangeLog.Compaction.DEFAULTS;
        return new DefinitionsSettings(d.ratio(), d.minLogBytes());
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("definitions-compaction-ratio", "number", "4", "a definitions change log is compacted into a new"
            + " snapshot once it is this many times the snapshot's size (at least 1) (docs/storage.md)"),
        Setting.of("definitions-compaction-min-bytes", "bytes", "1048576", "and once it is past this many bytes"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /** The change logs' compaction rule. */
    public ChangeLog.Compaction compaction() {
        return compaction(ratio, minLogBytes);
    }

    private static ChangeLog.Compaction compaction(double ratio, long minLogBytes) {
        try {
            return new ChangeLog.Compaction(ratio, minLogBytes);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ratio < 1 || Double.isNaN(ratio)
                ? "definitions-compaction-ratio must be >= 1" : "definitions-compaction-min-bytes must be >= 0");
        }
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a value that is not a number
     */
    public DefinitionsSettings with(String name, String value) {
        return switch (name) {
            case "definitions-compaction-ratio" -> new DefinitionsSettings(Double.parseDouble(value), minLogBytes);
            case "definitions-compaction-min-bytes" -> new DefinitionsSettings(ratio, ByteSize.parse(name, value));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
