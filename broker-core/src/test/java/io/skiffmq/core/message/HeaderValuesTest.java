package io.skiffmq.core.message;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.Bytes;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Decimal64;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.junit.jupiter.api.Test;

/** proton-j's AMQP 1.0 values brought to the neutral model, and back for converted messages. */
class HeaderValuesTest {

    @Test
    void neutralValuesComeBackAsTheyAre() {
        for (Object v : List.of("s", 1L, 2, (short) 3, (byte) 4, true, 1.5d, 2.5f, BigDecimal.ONE,
                Bytes.wrap(new byte[] {1}), Instant.EPOCH, UUID.randomUUID())) {
            assertThat(HeaderValues.normalise(v)).isSameAs(v);
        }
        assertThat(HeaderValues.normalise(null)).isNull();
    }

    @Test
    void protonTypesBecomeNeutral() {
        assertThat(HeaderValues.normalise(Symbol.valueOf("sym"))).isEqualTo("sym");
        assertThat(HeaderValues.normalise('c')).isEqualTo("c");
        assertThat(HeaderValues.normalise(UnsignedByte.valueOf((byte) 200))).isEqualTo((short) 200);
        assertThat(HeaderValues.normalise(UnsignedShort.valueOf((short) -1))).isEqualTo(65535);
        assertThat(HeaderValues.normalise(UnsignedInteger.valueOf(4_000_000_000L))).isEqualTo(4_000_000_000L);
        assertThat(HeaderValues.normalise(UnsignedLong.valueOf(7))).isEqualTo(7L);
        assertThat(HeaderValues.normalise(new Binary(new byte[] {9, 1, 2, 3}, 1, 2)))
            .as("only the binary's own range").isEqualTo(Bytes.wrap(new byte[] {1, 2}));
        assertThat(HeaderValues.normalise(new Date(1234))).isEqualTo(Instant.ofEpochMilli(1234));
        assertThat(HeaderValues.normalise(new long[] {1, 2})).isEqualTo(List.of(1L, 2L));
        assertThat(HeaderValues.normalise(new Symbol[] {Symbol.valueOf("a")})).isEqualTo(List.of("a"));
        assertThat(HeaderValues.normalise(new Decimal64(1))).isSameAs(HeaderValues.UNSUPPORTED);
    }

    @Test
    void mapsGetStringKeysAndLoseWhatHasNoNeutralForm() {
        Map<Object, Object> m = new LinkedHashMap<>();
        m.put(Symbol.valueOf("k"), UnsignedInteger.ONE);
        m.put("nested", Map.of(Symbol.valueOf("n"), List.of(Symbol.valueOf("x"))));
        m.put(UnsignedLong.valueOf(1), "numeric keys are not header names");
        m.put("decimal", new Decimal64(1));
        m.put("null", null);
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("k", 1L);
        expected.put("nested", Map.of("n", List.of("x")));
        expected.put("null", null);
        assertThat(HeaderValues.normaliseMap(m)).isEqualTo(expected);
        assertThat(HeaderValues.normaliseMap(null)).isEmpty();
    }

    @Test
    void neutralValuesGoBackToAmqp10Types() {
        assertThat(HeaderValues.toAmqp10(Bytes.wrap(new byte[] {5}))).isEqualTo(new Binary(new byte[] {5}));
        assertThat(HeaderValues.toAmqp10(Instant.ofEpochSecond(2))).isEqualTo(new Date(2000));
        assertThat(HeaderValues.toAmqp10(Map.of("b", List.of(Bytes.wrap(new byte[] {1})))))
            .isEqualTo(Map.of("b", List.of(new Binary(new byte[] {1}))));
        assertThat(HeaderValues.toAmqp10(BigDecimal.TEN)).isSameAs(HeaderValues.UNSUPPORTED);
        assertThat(HeaderValues.toAmqp10(5L)).isEqualTo(5L);
    }
}
