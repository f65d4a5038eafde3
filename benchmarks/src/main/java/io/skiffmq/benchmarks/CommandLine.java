package io.skiffmq.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code --name=value} arguments over a tool's defaults; an unknown name is a usage error. */
final class CommandLine {
    private CommandLine() {
    }

    /**
     * @throws IllegalArgumentException naming the tool's settings, for an argument it does not know
     */
    static Map<String, String> parse(String tool, Map<String, String> defaults, String[] args) {
        Map<String, String> options = new LinkedHashMap<>(defaults);
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0 || !options.containsKey(arg.substring(2, eq))) {
                throw new IllegalArgumentException("usage: " + tool + " [--name=value]… with names "
                    + options.keySet() + "; got " + arg);
            }
            options.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return options;
    }

    /** {@link #parse}, exiting with status 2 and the usage on a bad argument. */
    static Map<String, String> parseOrExit(String tool, Map<String, String> defaults, String[] args) {
        try {
            return parse(tool, defaults, args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            throw e;
        }
    }
}
