package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** RFC 1982 on 32 bits, across the wrap. */
class SerialNumberTest {
    @Test
    void addWrapsAt2To32() {
        assertThat(SerialNumber.add(0xffffffffL, 1)).isZero();
        assertThat(SerialNumber.add(0xfffffff0L, 0x20)).isEqualTo(0x10);
    }

    @Test
    void diffIsTheSignedDistanceAcrossTheWrap() {
        assertThat(SerialNumber.diff(0x10, 0xfffffff0L)).isEqualTo(0x20);
        assertThat(SerialNumber.diff(0xfffffff0L, 0x10)).isEqualTo(-0x20);
        assertThat(SerialNumber.lessThan(0xfffffffeL, 1)).isTrue();
        assertThat(SerialNumber.lessThan(1, 0xfffffffeL)).isFalse();
    }
}
