package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * rabbitmqctl's answer to a command it does not have, with {@code --help} or without: exit 64 (usage), and on
 * standard error "Command 'x' not found." followed by either a suggestion, the nearest command name when it is
 * close enough (a Jaro distance of 0.77 or more, as rabbitmqctl's {@code AutoComplete.suggest_command}), or the
 * usage. picocli alone would show the top-level help and exit 0 for {@code x --help}; tools probe for a command
 * that way (the RabbitMQ Java client's {@code Host.isRabbitMqCtlCommandAvailable}). Stateless.
 */
final class UnknownCommand {
    private static final double SUGGESTION_DISTANCE = 0.77;

    private UnknownCommand() {
    }

    /**
     * The first argument that is no option nor an option's value, when it names no command; null otherwise (a
     * command, or none at all).
     */
    static String in(CommandLine commandLine, String[] args) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) {
                return i + 1 < args.length ? unknown(commandLine, args[i + 1]) : null;
            }
            if (arg.startsWith("-") && arg.length() > 1) {
                OptionSpec option = arg.contains("=") ? null : commandLine.getCommandSpec().findOption(arg);
                if (option != null && option.arity().max() > 0) {
                    i++; // its value
                }
                continue;
            }
            return unknown(commandLine, arg);
        }
        return null;
    }

    private static String unknown(CommandLine commandLine, String name) {
        return commandLine.getSubcommands().containsKey(name) ? null : name;
    }

    /** Prints rabbitmqctl's message; returns the exit code. */
    static int report(CommandLine commandLine, String name, PrintWriter err) {
        err.println();
        err.println("Command '" + name + "' not found. ");
        String nearest = null;
        double best = 0;
        for (String command : commandLine.getSubcommands().keySet()) {
            double distance = jaro(command, name);
            if (distance > best) {
                best = distance;
                nearest = command;
            }
        }
        if (best >= SUGGESTION_DISTANCE) {
            err.println("Did you mean '" + nearest + "'? ");
            err.println();
        } else {
            commandLine.usage(err);
        }
        return ExitCodes.USAGE;
    }

    /** The Jaro similarity of two strings: 1 for equal ones, 0 for ones with nothing in common. */
    static double jaro(String a, String b) {
        if (a.equals(b)) {
            return 1.0;
        }
        if (a.isEmpty() || b.isEmpty()) {
            return 0.0;
        }
        int window = Math.max(0, Math.max(a.length(), b.length()) / 2 - 1);
        boolean[] inA = new boolean[a.length()];
        boolean[] inB = new boolean[b.length()];
        int matches = 0;
        for (int i = 0; i < a.length(); i++) {
            for (int j = Math.max(0, i - window); j < Math.min(b.length(), i + window + 1); j++) {
                if (!inB[j] && a.charAt(i) == b.charAt(j)) {
                    inA[i] = true;
                    inB[j] = true;
                    matches++;
                    break;
                }
            }
        }
        if (matches == 0) {
            return 0.0;
        }
        int outOfOrder = 0;
        for (int i = 0, j = 0; i < a.length(); i++) {
            if (inA[i]) {
                while (!inB[j]) {
                    j++;
                }
                if (a.charAt(i) != b.charAt(j)) {
                    outOfOrder++;
                }
                j++;
            }
        }
        double m = matches;
        return (m / a.length() + m / b.length() + (m - outOfOrder / 2.0) / m) / 3;
    }
}
