package io.skiffmq.codec.stream;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.skiffmq.codec.testing.StreamHarness;

/**
 * Jazzer fuzz target for a stream protocol server's decoders: frames, then every command through
 * {@link StreamCodec} or its flyweight ({@link StreamHarness}), fed whole and split in two. A finding is any
 * exception other than a typed decode failure, a leaked buffer (the suite's leak check), a hang, or a different
 * outcome for the split input.
 *
 * <p>In the normal suite (no {@code JAZZER_FUZZ}) it replays
 * {@code src/test/resources/io/skiffmq/codec/stream/StreamFuzzTestInputs/streamFrames/}. To fuzz, seeded with the
 * committed hostile corpus: {@code broker-codec/fuzz.sh streamFrames SECONDS}.
 */
class StreamFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void streamFrames(byte[] input) {
        DecodeFailure whole = StreamHarness.server(input);
        DecodeFailure split = StreamHarness.server(input, input.length / 2 + 1);
        if (whole != split) {
            throw new IllegalStateException("whole input: " + whole + ", split in two: " + split);
        }
    }
}
