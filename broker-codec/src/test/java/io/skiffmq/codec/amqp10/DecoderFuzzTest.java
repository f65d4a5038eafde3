package io.skiffmq.codec.amqp10;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.skiffmq.codec.testing.DecoderHarness;

/**
 * Jazzer fuzz targets for the frame decoder (with every performative and transfer payload behind it) and the
 * message section scanner. A finding is any exception other than a typed decode failure, a leaked buffer (the
 * suite's leak check), or a hang.
 *
 * <p>In the normal suite (no {@code JAZZER_FUZZ}) each target replays its inputs from
 * {@code src/test/resources/.../DecoderFuzzTestInputs/<target>/} as a regression run. To fuzz, seeded with the
 * shared hostile corpus, see {@code broker-codec/README.md} ({@code broker-codec/fuzz.sh}).
 */
class DecoderFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void frames(byte[] input) {
        DecoderHarness.connection(input);
    }

    @FuzzTest(maxDuration = "30s")
    void sections(byte[] input) {
        DecoderHarness.message(input);
    }
}
