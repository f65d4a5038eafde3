package io.skiffmq.server.config;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The broker's command line, parsed with picocli from a command model made of {@link Settings}: one option
 * {@code --name=value} (or {@code --name value}) per setting, plus {@code --config-file}, {@code --help} and
 * {@code --version}. The usage text ({@link #usage}) is made from the same list, so it names every setting with its
 * default. Stateless.
 */
public final class CommandLineFlags {
    static final String CONFIG_FILE = "--config-file";

    /**
     * What the command line asked for.
     *
     * @param help {@code --help} was given: print {@link #usage} and stop
     * @param version {@code --version} was given
     * @param configFile {@code --config-file}, or null
     * @param values the settings, in command-line order
     */
    public record Parsed(boolean help, boolean version, String configFile, List<SettingValue> values) {
    }

    private CommandLineFlags() {
    }

    private static CommandLine commandLine() {
        CommandSpec spec = CommandSpec.create().name("skiffmq");
        spec.usageMessage()
            .description("SkiffMQ, an AMQP 1.0 and 0-9-1 broker.",
                "Each setting comes from, lowest priority first: its default; the config file (key = value lines:"
                    + " --config-file, else $SKIFFMQ_CONFIG_FILE, else ./skiffmq.conf or /etc/skiffmq/skiffmq.conf"
                    + " when there); the environment variable SKIFFMQ_NAME (SKIFFMQ_QUEUE_MEMORY_LIMIT for"
                    + " queue-memory-limit); the system property skiffmq.name; the flag --name=value.")
            .width(120)
            .sortOptions(false)
            .abbreviateSynopsis(true);
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("print this and exit").build());
        spec.addOption(OptionSpec.builder("--version").versionHelp(true).description("print the version and exit")
            .build());
        spec.addOption(OptionSpec.builder(CONFIG_FILE).paramLabel("<path>").type(String.class)
            .description("the config file (default: ./skiffmq.conf, else /etc/skiffmq/skiffmq.conf, when there)")
            .build());
        for (Setting setting : Settings.ALL) {
            spec.addOption(OptionSpec.builder("--" + setting.name()).paramLabel("<" + setting.type() + ">")
                .type(String.class).arity("1")
                .description(setting.meaning().replace("`", "") + " (default: " + setting.defaultValue() + ")")
                .build());
        }
        return new CommandLine(spec).setUnmatchedArgumentsAllowed(false).setOverwrittenOptionsAllowed(true);
    }

    /** Every setting with its type, default and meaning, as {@code --help} prints it. */
    public static String usage() {
        StringWriter out = new StringWriter();
        commandLine().usage(new PrintWriter(out));
        return out.toString();
    }

    /** @throws ConfigException naming the flag that is unknown or has no value */
    public static Parsed parse(String[] args) {
        ParseResult result;
        try {
            result = commandLine().parseArgs(args);
        } catch (CommandLine.UnmatchedArgumentException e) {
            List<String> unmatched = e.getUnmatched();
            String flag = unmatched.isEmpty() ? "?" : unmatched.get(0);
            int eq = flag.indexOf('=');
            String name = flag.startsWith("--") ? flag.substring(2, eq < 0 ? flag.length() : eq) : flag;
            throw new ConfigException(flag.startsWith("--") ? "unknown setting " + name + " (command line "
                + flag + ")" : "expected --name=value, got " + flag + " (command line)");
        } catch (CommandLine.ParameterException e) {
            throw new ConfigException(e.getMessage() + " (command line)");
        }
        String configFile = null;
        List<SettingValue> values = new ArrayList<>();
        for (OptionSpec option : result.matchedOptions()) {
            String flag = option.longestName();
            if (option.usageHelp() || option.versionHelp()) {
                continue;
            }
            if (flag.equals(CONFIG_FILE)) {
                configFile = option.getValue();
                continue;
            }
            for (String value : option.<String>stringValues()) {
                values.add(new SettingValue(flag.substring(2), value, "command line " + flag));
            }
        }
        return new Parsed(result.isUsageHelpRequested(), result.isVersionHelpRequested(), configFile, values);
    }
}
