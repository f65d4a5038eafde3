package io.skiffmq.server.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds the {@link BrokerConfig} from its sources, lowest priority first: the defaults, the config file
 * ({@link ConfigFile}), {@code SKIFFMQ_*} environment variables, {@code skiffmq.*} system properties, and the
 * command line ({@link CommandLineFlags}). The config file is {@code --config-file}, else the environment variable
 * {@code SKIFFMQ_CONFIG_FILE}, else the first of the default paths that exists (none is no error). A setting that
 * is unknown or has a value it does not take, in any source, stops the load with a {@link ConfigException} that
 * names it and where it came from. Stateless.
 */
public final class ConfigLoader {
    /** The environment variable naming the config file. */
    public static final String CONFIG_FILE_VARIABLE = "SKIFFMQ_CONFIG_FILE";
    /** Where the config file is looked for when none is named: the working directory's first. */
    public static final List<Path> DEFAULT_FILES = List.of(Path.of("skiffmq.conf"),
        Path.of("/etc/skiffmq/skiffmq.conf"));
    /**
     * {@code SKIFFMQ_*} variables that are not settings: the config file, the fuzzer's corpus (fuzz.sh), and where
     * docker/entrypoint.sh finds the jar.
     */
    private static final Set<String> NOT_SETTINGS = Set.of(CONFIG_FILE_VARIABLE, "SKIFFMQ_CORPUS_DIR",
        "SKIFFMQ_HOME");

    /**
     * What was loaded.
     *
     * @param config the settings, or null when {@code --help} or {@code --version} asked for no broker
     * @param flags the command line as parsed
     * @param configFile the config file read, or null
     */
    public record Loaded(BrokerConfig config, CommandLineFlags.Parsed flags, Path configFile) {
    }

    private ConfigLoader() {
    }

    /**
     * @param environment {@code System.getenv()}; only {@code SKIFFMQ_*} variables are read
     * @param systemProperties only {@code skiffmq.*} properties are read
     * @param defaultFiles where to look for a config file none is named ({@link #DEFAULT_FILES})
     * @throws ConfigException naming the setting and its source
     */
    public static Loaded load(String[] args, Map<String, String> environment, Map<Object, Object> systemProperties,
            List<Path> defaultFiles) {
        CommandLineFlags.Parsed flags = CommandLineFlags.parse(args);
        if (flags.help() || flags.version()) {
            return new Loaded(null, flags, null);
        }
        Path file = configFile(flags, environment, defaultFiles);
        List<SettingValue> values = new ArrayList<>();
        if (file != null) {
            values.addAll(ConfigFile.read(file));
        }
        values.addAll(fromEnvironment(environment));
        values.addAll(fromProperties(systemProperties));
        values.addAll(flags.values());
        BrokerConfig config = BrokerConfig.defaults();
        for (SettingValue value : values) {
            config = apply(config, value);
        }
        return new Loaded(config, flags, file);
    }

    private static Path configFile(CommandLineFlags.Parsed flags, Map<String, String> environment,
            List<Path> defaultFiles) {
        String named = flags.configFile() != null ? flags.configFile() : environment.get(CONFIG_FILE_VARIABLE);
        if (named != null) {
            Path path = Path.of(named);
            if (!Files.isReadable(path)) {
                throw new ConfigException("config file " + path.toAbsolutePath() + " does not exist or cannot be read"
                    + (flags.configFile() != null ? " (command line --config-file)"
                        : " (environment variable " + CONFIG_FILE_VARIABLE + ")"));
            }
            return path;
        }
        return defaultFiles.stream().filter(Files::isRegularFile).findFirst().orElse(null);
    }

    private static List<SettingValue> fromEnvironment(Map<String, String> environment) {
        List<SettingValue> values = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(environment).entrySet()) {
            String variable = e.getKey();
            if (!variable.startsWith("SKIFFMQ_") || NOT_SETTINGS.contains(variable)) {
                continue;
            }
            Setting setting = Settings.forEnvironment(variable);
            String origin = "environment variable " + variable;
            if (setting == null) {
                throw new ConfigException("unknown setting " + variable.substring("SKIFFMQ_".length())
                    .toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " (" + origin + ")");
            }
            values.add(new SettingValue(setting.name(), e.getValue(), origin));
        }
        return values;
    }

    private static List<SettingValue> fromProperties(Map<Object, Object> properties) {
        List<SettingValue> values = new ArrayList<>();
        for (Map.Entry<Object, Object> e : properties.entrySet()) {
            String key = e.getKey().toString();
            if (key.startsWith("skiffmq.")) {
                values.add(new SettingValue(key.substring("skiffmq.".length()), e.getValue().toString(),
                    "system property " + key));
            }
        }
        values.sort(java.util.Comparator.comparing(SettingValue::name));
        return values;
    }

    private static BrokerConfig apply(BrokerConfig config, SettingValue value) {
        if (Settings.get(value.name()) == null) {
            throw new ConfigException("unknown setting " + value.name() + " (" + value.origin() + ")");
        }
        try {
            return config.with(value.name(), value.value());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid " + value.name() + " = " + value.value() + ": " + e.getMessage()
                + " (" + value.origin() + ")");
        }
    }
}
