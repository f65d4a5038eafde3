package io.skiffmq.codec.amqp091;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldTableTest {

    /** Every type RabbitMQ's clients write, nested once. */
    static Map<String, Object> everyType() {
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("n", 1L);
        List<Object> array = new ArrayList<>(Arrays.asList("a", 2, null, List.of(true)));
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("string", "héllo");
        t.put("long", Long.MIN_VALUE);
        t.put("int", -7);
        t.put("short", (short) -300);
        t.put("byte", (byte) -2);
        t.put("bool", true);
        t.put("double", 1.5d);
        t.put("float", 2.25f);
        t.put("decimal", new BigDecimal("-12.345"));
        t.put("timestamp", Instant.ofEpochSecond(1_700_000_000L));
        t.put("bytes", Bytes.wrap(new byte[] {0, (byte) 0xff, 3}));
        t.put("void", null);
        t.put("table", nested);
        t.put("array", array);
        return t;
    }

    private static byte[] encode(Map<String, ?> table) {
        ByteBuf out = Unpooled.buffer();
        FieldTable.writeTable(out, table);
        return ByteBufUtil.getBytes(out);
    }

    private static Map<String, Object> decode(byte[] bytes) throws Amqp091DecodeException {
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        Map<String, Object> table = FieldTable.readTable(in);
        assertThat(in.isReadable()).as("the whole table is consumed").isFalse();
        return table;
    }

    @Test
    void everyTypeRoundTripsToTheSameValuesAndBytes() throws Exception {
        byte[] bytes = encode(everyType());
        Map<String, Object> decoded = decode(bytes);
        assertThat(decoded).isEqualTo(everyType());
        assertThat(encode(decoded)).isEqualTo(bytes);
    }

    @Test
    void readsRabbitMqWireBytes() throws Exception {
        // {"a": longstr "hi", "b": signed 16 's' -1, "c": 'l' 5, "d": 't' false, "e": 'x' [1]}, as RabbitMQ writes
        byte[] wire = hex("00000025" + "0161" + "53" + "00000002" + "6869" + "0162" + "73" + "ffff"
            + "0163" + "6c" + "0000000000000005" + "0164" + "74" + "00" + "0165" + "78" + "00000001" + "01");
        Map<String, Object> t = decode(wire);
        assertThat(t).containsExactly(Map.entry("a", "hi"), Map.entry("b", (short) -1), Map.entry("c", 5L),
            Map.entry("d", false), Map.entry("e", Bytes.wrap(new byte[] {1})));
        assertThat(encode(t)).isEqualTo(wire);
    }

    @Test
    void unsignedTypesWidenToTheNextSignedType() throws Exception {
        byte[] wire = hex("00000010" + "0141" + "42" + "ff" + "0142" + "75" + "ffff" + "0143" + "69" + "ffffffff");
        assertThat(decode(wire)).containsExactly(Map.entry("A", (short) 255), Map.entry("B", 65535),
            Map.entry("C", 4294967295L));
    }

    @Test
    void aLongStringThatIsNotUtf8IsBytes() throws Exception {
        byte[] wire = hex("00000009" + "0161" + "53" + "00000002" + "c328");
        assertThat(decode(wire)).containsEntry("a", Bytes.wrap(new byte[] {(byte) 0xc3, 0x28}));
    }

    @Test
    void aTimestampBeyondWhatJavaRepresentsIsATypedError() {
        assertThatThrownBy(() -> decode(hex("0000000b" + "0174" + "54" + "7fffffffffffffff")))
            .isInstanceOf(Amqp091DecodeException.class).hasMessageContaining("timestamp");
    }

    @Test
    void everyTruncationIsATypedError() {
        byte[] bytes = encode(everyType());
        for (int length = 0; length < bytes.length; length++) {
            byte[] cut = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> decode(cut)).as("cut at %d", length).isInstanceOf(Amqp091DecodeException.class);
        }
    }

    @Test
    void lengthsThatLieAreTypedErrors() {
        // the table claims 5 bytes but its one field's string claims 1000
        assertThatThrownBy(() -> decode(hex("00000008" + "0161" + "53" + "000003e8" + "68")))
            .isInstanceOf(Amqp091DecodeException.class).hasMessageContaining("long string");
        // a nested table longer than its container
        assertThatThrownBy(() -> decode(hex("00000008" + "0161" + "46" + "00000004" + "0000" + "0000")))
            .isInstanceOf(Amqp091DecodeException.class);
        assertThatThrownBy(() -> decode(hex("7fffffff"))).isInstanceOf(Amqp091DecodeException.class);
    }

    @Test
    void unknownTypeCodesAndDeepNestingAreTypedErrors() {
        assertThatThrownBy(() -> decode(hex("00000003" + "0161" + "5a")))
            .isInstanceOf(Amqp091DecodeException.class).hasMessageContaining("unknown field type 0x5a");
        // arrays nested 1000 deep: each level is 'A' plus a length, innermost empty
        int depth = 1000;
        ByteBuf b = Unpooled.buffer();
        b.writeInt(2 + depth * 5).writeByte(1).writeByte('a');
        for (int i = 0; i < depth; i++) {
            b.writeByte('A').writeInt((depth - i - 1) * 5);
        }
        byte[] bomb = ByteBufUtil.getBytes(b);
        assertThatThrownBy(() -> decode(bomb)).isInstanceOf(Amqp091DecodeException.class)
            .hasMessageContaining("nested deeper");
    }

    @Test
    void valuesWithoutA091TypeAreRefusedOnEncode() {
        assertThatThrownBy(() -> encode(Map.of("u", java.util.UUID.randomUUID())))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> encode(Map.of("d", new BigDecimal("1e-300"))))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> encode(Map.of("x".repeat(256), 1))).isInstanceOf(IllegalArgumentException.class);
    }
}
