package io.skiffmq.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs JMH with the usual command line ({@code java -jar benchmarks/target/benchmarks.jar [regex] [-prof gc]…})
 * and hands every fork the JVM flags defined once in the root pom ({@code skiffmq.jvm.flags}, packaged here as
 * {@code jvm.options}), with Netty's leak detector off.
 */
public final class BenchmarkMain {
    private BenchmarkMain() {
    }

    public static void main(String[] args) throws IOException, RunnerException, CommandLineOptionException {
        CommandLineOptions commandLine = new CommandLineOptions(args);
        if (commandLine.shouldHelp()) {
            commandLine.showHelp();
            return;
        }
        List<String> forkArgs = new ArrayList<>(jvmOptions());
        forkArgs.add("-Dio.netty.leakDetection.level=disabled");
        Runner runner = new Runner(new OptionsBuilder().parent(commandLine)
            .jvmArgsAppend(forkArgs.toArray(new String[0])).build());
        if (commandLine.shouldList()) {
            runner.list();
        } else if (commandLine.shouldListProfilers()) {
            commandLine.listProfilers();
        } else {
            runner.run();
        }
    }

    static List<String> jvmOptions() throws IOException {
        try (InputStream in = BenchmarkMain.class.getResourceAsStream("/jvm.options")) {
            if (in == null) {
                throw new IOException("jvm.options missing from the benchmarks jar");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            return text.isEmpty() ? List.of() : Arrays.asList(text.split("\\s+"));
        }
    }
}
