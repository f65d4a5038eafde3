package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.ResourceLeakDetector;
import io.skiffmq.codec.testing.Amqp;
import io.skiffmq.codec.testing.CpuBudget;
import io.skiffmq.codec.testing.DecoderHarness;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every file of {@code ../shared/corpora/amqp10/} (hostile inputs from go-amqp's and Qpid Proton's fuzzing)
 * through the decoder its folder targets: each must decode cleanly or fail with a typed {@link DecodeFailure},
 * within a time and allocation bound, leaking nothing. A {@code NullPointerException}, {@code ClassCastException}
 * or index exception anywhere in decoding (proton-j's included: {@link ProtonCodec} never turns one into a decode
 * failure) escapes and fails the test, so no input is rejected by a caught NPE. The corpus is read in place,
 * never copied into the project; set {@code -Dskiffmq.corpus.dir} to read it from elsewhere. Without the corpus the
 * test is reported skipped, with the reason (a failure on CI, where it must be there).
 */
class HostileCorpusTest {
    private static final Map<String, Function<byte[], DecodeFailure>> DECODER_BY_FOLDER = Map.of(
        "go-amqp-conn", DecoderHarness::connection,
        "go-amqp-marshal", DecoderHarness::values,
        "proton-connection-driver", DecoderHarness::connection,
        "proton-proactor-receive", DecoderHarness::connection,
        "proton-message-decode", DecoderHarness::message);

    private static final Map<String, Integer> OUTCOMES = new java.util.TreeMap<>();
    /** The most one input's decoding allocated, for the summary; the test thread's. */
    private static long mostAllocated;

    /** Allocation allowed per input: a fixed allowance plus a multiple of its size. */
    private static final long ALLOCATION_FIXED = 1 << 20;
    private static final long ALLOCATION_PER_INPUT_BYTE = 64;

    /** First use loads classes and proton-j's type tables; that is not what the bound is about. */
    @BeforeAll
    static void warmUp() {
        byte[] message = Amqp.concat(Amqp.described(0x73, Amqp.list8(Amqp.nul(), Amqp.nul(), Amqp.str8("q"))),
            Amqp.described(0x74, Amqp.map8(Amqp.str8("k"), Amqp.list8(Amqp.str8("v")))));
        for (int i = 0; i < 100; i++) {
            DecoderHarness.message(message);
            DecoderHarness.values(message);
            DecoderHarness.connection(Amqp.hex("41 4d 51 50 00 01 00 00 00 00 00 0c 02 00 00 00 00 53 10 45"));
        }
    }

    @AfterAll
    static void summary() {
        OUTCOMES.forEach((outcome, count) -> System.out.printf("corpus %-50s %5d%n", outcome, count));
        System.out.printf("corpus most bytes allocated by one input: %d%n", mostAllocated);
    }

    static Path corpusDir() {
        String configured = System.getProperty("skiffmq.corpus.dir");
        if (configured != null) {
            return Path.of(configured);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared/corpora/amqp10");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * Whether the corpus is there. Asked before the inputs are listed: an abort while listing them would leave the
     * test with no invocation, which Surefire reports as nothing at all, not as skipped.
     */
    static boolean corpusPresent() {
        boolean present = corpusDir() != null;
        if (!present && System.getenv("CI") != null) {
            throw new IllegalStateException("../shared/corpora/amqp10 not found: CI must run with shared/ beside the checkout");
        }
        return present;
    }

    static Stream<Arguments> inputs() throws IOException {
        Path root = corpusDir();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().equals("README.md"))
                .sorted().toList();
        }
        assertThat(files).as("corpus files").hasSizeGreaterThanOrEqualTo(2961);
        return files.stream().map(file -> {
            String folder = root.relativize(file).getName(0).toString();
            return Arguments.of(root.relativize(file).toString(), file, folder);
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("inputs")
    @EnabledIf(value = "corpusPresent", disabledReason = "no ../shared/corpora/amqp10 beside this checkout")
    void decodesCleanlyOrFailsTyped(String name, Path file, String folder) {
        Function<byte[], DecodeFailure> decoder = DECODER_BY_FOLDER.get(folder);
        assertThat(decoder).as("a decoder for folder %s", folder).isNotNull();
        byte[] input;
        try {
            input = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] allocation = new long[1];
        // any exception other than a typed decode failure escapes from apply() and fails the test
        DecodeFailure outcome = CpuBudget.within(Duration.ofSeconds(5), () -> {
            // The first run is watched by the leak detector (paranoid in the build) and pays once for a path's first
            // use (class loading, proton-j's type tables), which depends on the inputs before it. The bound is on
            // what decoding the input costs: the second, identical run, without the detector's stack-trace records
            // (their size follows the test's stack depth and the buffer's touches, not the input).
            decoder.apply(input);
            ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            try {
                long before = threads.getCurrentThreadAllocatedBytes();
                DecodeFailure again = decoder.apply(input);
                allocation[0] = threads.getCurrentThreadAllocatedBytes() - before;
                return again;
            } finally {
                ResourceLeakDetector.setLevel(level);
            }
        });
        OUTCOMES.merge(folder + " -> " + (outcome == null ? "clean decode" : outcome), 1, Integer::sum);
        long allocated = allocation[0];
        mostAllocated = Math.max(mostAllocated, allocated);
        assertThat(allocated).as("bytes allocated decoding %d input bytes", input.length)
            .isLessThan(ALLOCATION_FIXED + ALLOCATION_PER_INPUT_BYTE * input.length);
    }
}
