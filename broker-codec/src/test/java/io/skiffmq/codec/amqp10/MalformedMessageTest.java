package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.described;
import static io.skiffmq.codec.testing.Amqp.hex;
import static io.skiffmq.codec.testing.Amqp.list0;
import static io.skiffmq.codec.testing.Amqp.list8;
import static io.skiffmq.codec.testing.Amqp.map8;
import static io.skiffmq.codec.testing.Amqp.nul;
import static io.skiffmq.codec.testing.Amqp.str8;
import static io.skiffmq.codec.testing.Amqp.sym8;
import static io.skiffmq.codec.testing.Amqp.vbin8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Malformed messages, each with the failure the scanner (or the lazy accessor that reads the field) reports. */
class MalformedMessageTest {
    private static final byte[] DATA = described(0x75, vbin8(new byte[] {1, 2, 3}));
    private static final byte[] PROPERTIES = described(0x73, list8(nul(), nul(), str8("q")));

    /** A described value nested {@code depth} times inside an amqp-value section. */
    private static byte[] nestingBomb(int depth) {
        byte[] value = new byte[depth * 3 + 1];
        for (int i = 0; i < depth; i++) {
            value[i * 3 + 1] = 0x53;
            value[i * 3 + 2] = 0x01;
        }
        value[depth * 3] = 0x40;
        return described(0x77, value);
    }

    static Stream<Arguments> malformedAtScan() {
        return Stream.of(
            Arguments.of("truncated section (descriptor only)", hex("00 53"), DecodeFailure.TRUNCATED),
            Arguments.of("truncated fixed-width value", concat(DATA, hex("00 53 73 70 00 00")), DecodeFailure.TRUNCATED),
            Arguments.of("binary size past the buffer", hex("00 53 75 a0 10 01 02"), DecodeFailure.BAD_SIZE),
            Arguments.of("list32 size past the buffer", hex("00 53 73 d0 7f ff ff ff 00 00 00 01 40"),
                DecodeFailure.BAD_SIZE),
            Arguments.of("unknown section descriptor", concat(described(0x79, list0()), DATA),
                DecodeFailure.UNKNOWN_DESCRIPTOR),
            Arguments.of("unknown symbolic descriptor", concat(new byte[] {0x00}, sym8("amqp:nothing:list"), list0()),
                DecodeFailure.UNKNOWN_DESCRIPTOR),
            Arguments.of("ulong descriptor in another domain", hex("00 80 00 00 01 37 00 00 00 73 45"),
                DecodeFailure.UNKNOWN_DESCRIPTOR),
            Arguments.of("not a described value", concat(nul(), DATA), DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("properties after application-properties",
                concat(described(0x74, map8()), PROPERTIES, DATA), DecodeFailure.SECTION_ORDER),
            Arguments.of("header after the body", concat(DATA, described(0x70, list0())), DecodeFailure.SECTION_ORDER),
            Arguments.of("two headers", concat(described(0x70, list0()), described(0x70, list0())),
                DecodeFailure.SECTION_ORDER),
            Arguments.of("two amqp-value sections", concat(described(0x77, nul()), described(0x77, nul())),
                DecodeFailure.SECTION_ORDER),
            Arguments.of("data then amqp-sequence", concat(DATA, described(0x76, list0())), DecodeFailure.SECTION_ORDER),
            Arguments.of("section after the footer", concat(described(0x78, map8()), DATA), DecodeFailure.SECTION_ORDER),
            Arguments.of("header that is not a list", described(0x70, map8()), DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("data that is not binary", described(0x75, str8("x")), DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("application-properties that is a list", described(0x74, list0()),
                DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("undefined format code", hex("00 53 77 33"), DecodeFailure.UNKNOWN_FORMAT_CODE),
            Arguments.of("descriptor that is a string", concat(new byte[] {0x00}, str8("amqp:data:binary"), vbin8(new byte[0])),
                DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("nesting bomb in amqp-value", nestingBomb(100_000), DecodeFailure.NESTING_TOO_DEEP));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedAtScan")
    void scanRejects(String name, byte[] bytes, DecodeFailure expected) {
        assertThatThrownBy(() -> MessageSections.scan(Unpooled.wrappedBuffer(bytes)))
            .isInstanceOfSatisfying(AmqpDecodeException.class, e -> {
                assertThat(e.failure()).isEqualTo(expected);
                assertThat(e.condition()).isEqualTo(AmqpError.DECODE_ERROR);
            });
    }

    interface Accessor {
        Object read(MessageSections m) throws AmqpDecodeException;
    }

    static Stream<Arguments> malformedInAField() {
        return Stream.of(
            Arguments.of("huge count in application-properties",
                described(0x74, hex("c1 03 ff a1 00")), (Accessor) m -> m.applicationProperty("k"), DecodeFailure.BAD_COUNT),
            Arguments.of("odd count in application-properties",
                described(0x74, map8(str8("k"), str8("v"), str8("dangling"))), (Accessor) m -> m.applicationProperties(),
                DecodeFailure.BAD_COUNT),
            Arguments.of("application-property key that is not a string",
                described(0x74, map8(sym8("k"), str8("v"))), (Accessor) m -> m.applicationProperties(),
                DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("to that is a symbol", described(0x73, list8(nul(), nul(), sym8("q"))), (Accessor) m -> m.to(),
                DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("message-id of a type ids cannot have", described(0x73, list8(hex("41"))),
                (Accessor) m -> m.messageId(), DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("durable that is a string", described(0x70, list8(str8("yes"))), (Accessor) m -> m.durable(),
                DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("two-byte boolean that is neither 0 nor 1", described(0x70, list8(hex("56 02"))),
                (Accessor) m -> m.durable(), DecodeFailure.UNEXPECTED_TYPE),
            Arguments.of("properties list count larger than its bytes", described(0x73, hex("c0 02 0d 40")),
                (Accessor) m -> m.subject(), DecodeFailure.BAD_COUNT),
            Arguments.of("annotation value nested too deeply",
                described(0x72, concat(hex("c1"), new byte[] {(byte) 0xc8, 2}, sym8("x"), deepList(40))),
                (Accessor) m -> m.messageAnnotation("x"), DecodeFailure.NESTING_TOO_DEEP));
    }

    /** list8 inside list8 … {@code depth} deep: 2 bytes a level, so it fits a map8. */
    private static byte[] deepList(int depth) {
        byte[] value = list0();
        for (int i = 0; i < depth; i++) {
            value = concat(new byte[] {(byte) 0xc0, (byte) (value.length + 1), 1}, value);
        }
        return value;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedInAField")
    void fieldAccessRejects(String name, byte[] section, Accessor accessor, DecodeFailure expected)
            throws AmqpDecodeException {
        byte[] bytes = Arrays.copyOf(section, section.length);
        // the scanner reads sizes only: it accepts the message, and the accessor that decodes the field fails
        MessageSections m = MessageSections.scan(Unpooled.wrappedBuffer(fixMapSize(bytes)));
        assertThatThrownBy(() -> accessor.read(m))
            .isInstanceOfSatisfying(AmqpDecodeException.class, e -> assertThat(e.failure()).isEqualTo(expected));
    }

    /** Sets the map8 size byte of a hand-assembled section whose size was left as a placeholder. */
    private static byte[] fixMapSize(byte[] bytes) {
        if (bytes.length > 4 && (bytes[3] & 0xff) == 0xc1 && (bytes[4] & 0xff) == 0xc8) {
            bytes[4] = (byte) (bytes.length - 5);
        }
        return bytes;
    }
}
