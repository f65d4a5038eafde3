package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Described values proton-j would have built with a {@code NullPointerException} or {@code ClassCastException}
 * inside (a missing list, a mandatory field left out or null, a field of another type), rejected by
 * {@link CompositeShapes} first with the failure and a message naming the type and field. Each goes through the
 * codec entry point the broker uses: performatives, SASL frames, or any value ({@link ProtonCodec#decode}).
 */
class CompositeShapesTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
        sasl-init that is null               | sasl  | 00 53 41 40                         | UNEXPECTED_TYPE | sasl-init at 3 is 0x40, not a list
        sasl-init without mechanism          | sasl  | 00 53 41 45                         | MISSING_FIELD   | sasl-init without mechanism
        sasl-mechanisms as an array of uint  | sasl  | 00 53 40 c0 06 01 e0 03 01 52 05    | UNEXPECTED_TYPE | sasl-mechanisms sasl-server-mechanisms at 6 is not a symbol or array of symbols
        open without container-id            | frame | 00 53 10 45                         | MISSING_FIELD   | open without container-id
        open whose container-id is a uint    | frame | 00 53 10 c0 02 01 43                | UNEXPECTED_TYPE | open container-id at 6 is not a string
        open by its symbolic descriptor      | frame | 00 a3 0e {amqp:open:list} 45        | MISSING_FIELD   | open without container-id
        attach whose source is null inside   | frame | 00 53 12 c0 0c 06 a1 01 61 43 41 40 40 00 53 28 40 | UNEXPECTED_TYPE | source at 16 is 0x40, not a list
        attach whose target is an outcome    | frame | 00 53 12 c0 0d 07 a1 01 61 43 41 40 40 40 00 53 24 45 | UNEXPECTED_TYPE | attach target at 14 is not a target
        attach with snd-settle-mode 3        | frame | 00 53 12 c0 08 04 a1 01 61 43 41 50 03 | UNEXPECTED_TYPE | attach snd-settle-mode at 11 is not a sender-settle-mode
        close with more fields than it has   | frame | 00 53 18 c0 03 02 40 40             | BAD_COUNT       | close at 3 has 2 fields, at most 1
        close whose error has no condition   | frame | 00 53 18 c0 05 01 00 53 1d 45       | MISSING_FIELD   | error without condition
        an error without a list in a map     | value | c1 08 02 a3 01 6b 00 53 1d 40       | UNEXPECTED_TYPE | error at 9 is 0x40, not a list
        an array of errors                   | value | e0 05 01 00 53 1d 45                | UNEXPECTED_TYPE | array of error at 0
        properties whose to is a symbol      | value | 00 53 73 c0 06 03 40 40 a3 01 71    | UNEXPECTED_TYPE | properties to at 8 is not a string
        data that is a string                | value | 00 53 75 a1 01 78                   | UNEXPECTED_TYPE | data section at 3 is 0xa1, not a binary
        """)
    void rejectsWhatProtonJWouldHaveThrownOn(String name, String entry, String hex, DecodeFailure failure,
            String message) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes(hex));
        assertThatThrownBy(() -> decode(entry, buf))
            .isInstanceOfSatisfying(AmqpDecodeException.class, e -> {
                assertThat(e.failure()).isEqualTo(failure);
                assertThat(e.getMessage()).isEqualTo(failure + ": " + message);
            });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
        open with its container-id only      | frame | 00 53 10 c0 04 01 a1 01 63
        close without an error               | frame | 00 53 18 45
        sasl-mechanisms as an array          | sasl  | 00 53 40 c0 0b 01 e0 08 01 a3 05 50 4c 41 49 4e
        a map with an unknown described key  | value | c1 07 02 00 53 99 40 a1 00
        """)
    void acceptsWhatIsWellShaped(String name, String entry, String hex) throws AmqpDecodeException {
        assertThat(decode(entry, Unpooled.wrappedBuffer(bytes(hex)))).isNotNull();
    }

    private static Object decode(String entry, ByteBuf buf) throws AmqpDecodeException {
        return switch (entry) {
            case "frame" -> new PerformativeCodec().decode(buf);
            case "sasl" -> new PerformativeCodec().decodeSasl(buf);
            default -> ProtonCodec.current().decode(buf, 0, buf.writerIndex());
        };
    }

    /** Hex, with {@code {text}} for the text's UTF-8 bytes. */
    private static byte[] bytes(String spec) {
        StringBuilder hex = new StringBuilder();
        for (String part : spec.split("[{}]")) {
            if (spec.contains("{" + part + "}")) {
                for (byte b : part.getBytes(StandardCharsets.UTF_8)) {
                    hex.append(String.format("%02x ", b));
                }
            } else {
                hex.append(part).append(' ');
            }
        }
        return hex(hex.toString());
    }
}
