package io.skiffmq.codec.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.DecodeFailure;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/** The fuzz seeds are valid input: the harness must get through them without a failure. */
class DecoderHarnessTest {
    private static final String SEEDS = "/io/skiffmq/codec/amqp10/DecoderFuzzTestInputs/";

    private static byte[] seed(String path) throws IOException {
        try (InputStream in = DecoderHarnessTest.class.getResourceAsStream(SEEDS + path)) {
            assertThat(in).as(path).isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void aWholeConversationDecodesCleanly() throws IOException {
        assertThat(DecoderHarness.connection(seed("frames/conversation"))).isNull();
    }

    @Test
    void seedMessagesDecodeCleanly() throws IOException {
        assertThat(DecoderHarness.message(seed("sections/full-message"))).isNull();
        assertThat(DecoderHarness.message(seed("sections/amqp-value"))).isNull();
    }

    @Test
    void aConversationCutShortIsNotAFailure() throws IOException {
        byte[] conversation = seed("frames/conversation");
        assertThat(DecoderHarness.connection(java.util.Arrays.copyOf(conversation, conversation.length - 3))).isNull();
    }

    @Test
    void aBrokenPerformativeIsReportedAsItsFailure() throws IOException {
        byte[] conversation = seed("frames/conversation");
        // the open frame's list8 count (0x01) becomes 0xff: more elements than bytes
        int open = indexOf(conversation, new byte[] {0x00, 0x53, 0x10, (byte) 0xc0});
        conversation[open + 5] = (byte) 0xff;
        assertThat(DecoderHarness.connection(conversation)).isEqualTo(DecodeFailure.BAD_COUNT);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
