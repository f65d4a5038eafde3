package io.skiffmq.codec.amqp091;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.skiffmq.codec.testing.Amqp091Harness;

/**
 * Jazzer fuzz target for the AMQP 0-9-1 frame decoder with the method codec, content headers and properties
 * behind it ({@link Amqp091Harness}), fed whole and split in two. A finding is any exception other than a typed
 * decode failure, a leaked buffer (the suite's leak check), a hang, or a different outcome for the split input.
 *
 * <p>In the normal suite (no {@code JAZZER_FUZZ}) it replays
 * {@code src/test/resources/io/skiffmq/codec/amqp091/Amqp091FuzzTestInputs/frames091/}. To fuzz, seeded with the
 * generated hostile corpus: {@code broker-codec/fuzz.sh frames091 SECONDS}.
 */
class Amqp091FuzzTest {

    @FuzzTest(maxDuration = "30s")
    void frames091(byte[] input) {
        DecodeFailure whole = Amqp091Harness.connection(input);
        DecodeFailure split = Amqp091Harness.connection(input, input.length / 2 + 1);
        if (whole != split) {
            throw new IllegalStateException("whole input: " + whole + ", split in two: " + split);
        }
    }
}
