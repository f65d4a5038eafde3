package io.skiffmq.codec.amqp091;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.skiffmq.codec.testing.Amqp091Harness;
import io.skiffmq.codec.testing.CpuBudget;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A few hundred generated hostile inputs ({@link HostileInputs}) through the frame decoder, the method codec and
 * the content header and properties decoders, whole and split in two: each must decode cleanly or fail with a
 * typed {@link DecodeFailure}, within a time and allocation bound, leaking nothing.
 *
 * <p>With {@code -Dskiffmq.amqp091.corpus.out=DIR} the inputs are also written to DIR, one file each: the seed
 * corpus of the {@code frames091} fuzz target ({@code broker-codec/fuzz.sh}).
 */
class Amqp091HostileCorpusTest {
    private static final Map<String, Integer> OUTCOMES = new TreeMap<>();
    private static final Set<DecodeFailure> SEEN = EnumSet.noneOf(DecodeFailure.class);

    /** Allocation allowed per input: a fixed allowance plus a multiple of its size. */
    private static final long ALLOCATION_FIXED = 8 << 20;
    private static final long ALLOCATION_PER_INPUT_BYTE = 64;

    private static final ByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(false, true);

    static List<HostileInputs.Input> inputs() {
        return HostileInputs.generate();
    }

    /** First use loads classes; that is not what the bound is about. */
    @BeforeAll
    static void warmUp() throws IOException {
        for (int i = 0; i < 50; i++) {
            for (byte[] valid : HostileInputs.valid()) {
                Amqp091Harness.connection(valid);
                Amqp091Harness.connection(valid, valid.length, UNTRACKED);
            }
        }
        String out = System.getProperty("skiffmq.amqp091.corpus.out");
        if (out != null) {
            Path dir = Files.createDirectories(Path.of(out));
            for (HostileInputs.Input input : inputs()) {
                Files.write(dir.resolve(input.name()), input.bytes());
            }
        }
    }

    @AfterAll
    static void summary() {
        OUTCOMES.forEach((outcome, count) -> System.out.printf("amqp091 corpus %-30s %5d%n", outcome, count));
        // the generator must keep reaching every failure the decoders can report
        assertThat(SEEN).containsExactlyInAnyOrder(DecodeFailure.values());
        assertThat(OUTCOMES).containsKey("clean decode");
    }

    @Test
    void aFewHundredInputs() {
        assertThat(inputs()).hasSizeGreaterThanOrEqualTo(400);
        assertThat(inputs().stream().map(HostileInputs.Input::name).distinct()).hasSameSizeAs(inputs());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("inputs")
    void decodesCleanlyOrFailsTyped(HostileInputs.Input input) {
        byte[] bytes = input.bytes();
        // any exception other than a typed decode failure escapes and fails the test
        DecodeFailure whole = CpuBudget.within(Duration.ofSeconds(5), () -> Amqp091Harness.connection(bytes));
        DecodeFailure split = CpuBudget.within(Duration.ofSeconds(5),
            () -> Amqp091Harness.connection(bytes, bytes.length / 2 + 1));
        assertThat(split).as("the same outcome however the bytes arrive").isEqualTo(whole);
        // allocation is measured without the leak detector, which records a stack trace on every read
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        DecodeFailure untracked = Amqp091Harness.connection(bytes, bytes.length, UNTRACKED);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(untracked).isEqualTo(whole);
        synchronized (OUTCOMES) {
            OUTCOMES.merge(whole == null ? "clean decode" : whole.toString(), 1, Integer::sum);
            if (whole != null) {
                SEEN.add(whole);
            }
        }
        assertThat(allocated).as("bytes allocated decoding %d input bytes", bytes.length)
            .isLessThan(ALLOCATION_FIXED + ALLOCATION_PER_INPUT_BYTE * bytes.length);
        if (input.name().startsWith("valid-")) {
            assertThat(whole).isNull();
        }
    }

    @Test
    void nestingIsRefusedPastTheLimit() {
        Map<String, byte[]> byName = new TreeMap<>();
        inputs().forEach(i -> byName.put(i.name(), i.bytes()));
        assertThat(Amqp091Harness.connection(byName.get("table-nested-64"))).isNull();
        assertThat(Amqp091Harness.connection(byName.get("table-nested-65"))).isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(Amqp091Harness.connection(byName.get("table-nested-15000"))).isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(Amqp091Harness.connection(byName.get("table-wide"))).isNull();
    }
}
