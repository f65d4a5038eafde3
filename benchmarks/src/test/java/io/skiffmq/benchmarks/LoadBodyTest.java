package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The load tool's bodies: what a sender writes a receiver accepts, and any damage or misorder is caught. */
class LoadBodyTest {
    private static ByteBuf body(long sentAt, int id, int size) {
        ByteBuf buf = Unpooled.buffer(size);
        LoadBody.write(buf, sentAt, id, size);
        return buf;
    }

    @Test
    void aBodyCarriesItsSendTimeSenderAndSequence() {
        int id = LoadBody.id(7, 123_456);
        ByteBuf buf = body(42L, id, 64);
        assertThat(buf.readableBytes()).isEqualTo(64);
        assertThat(LoadBody.check(buf, 0, 64, 64)).isEqualTo(id);
        assertThat(LoadBody.sentAt(buf, 0)).isEqualTo(42L);
        assertThat(LoadBody.sender(id)).isEqualTo(7);
        assertThat(LoadBody.sequence(id)).isEqualTo(123_456);
    }

    @Test
    void theSequenceWrapsAt24Bits() {
        assertThat(LoadBody.sequence(LoadBody.id(3, (1L << 24) + 5))).isEqualTo(5);
        assertThat(LoadBody.sender(LoadBody.id(255, (1L << 24) - 1))).isEqualTo(255);
    }

    @Test
    void aWrongLengthOrAChangedByteIsDamage() {
        ByteBuf buf = body(1L, LoadBody.id(1, 1), 40);
        assertThat(LoadBody.check(buf, 0, 39, 40)).isEqualTo(-1);
        assertThat(LoadBody.check(buf, 0, 40, 41)).isEqualTo(-1);
        for (int i = LoadBody.HEADER; i < 40; i++) {
            ByteBuf damaged = buf.copy();
            damaged.setByte(i, damaged.getByte(i) + 1);
            assertThat(LoadBody.check(damaged, 0, 40, 40)).as("byte %d changed", i).isEqualTo(-1);
        }
        // another message's id over the same padding
        ByteBuf swapped = buf.copy().setInt(8, LoadBody.id(1, 2));
        assertThat(LoadBody.check(swapped, 0, 40, 40)).isEqualTo(-1);
    }

    @Test
    void aLargeBodyIsPaddedAndCheckedToItsLastByte() {
        int id = LoadBody.id(5, 77);
        ByteBuf buf = body(3L, id, 5000);
        for (int i = LoadBody.HEADER; i < 5000; i++) {
            assertThat(buf.getByte(i)).as("byte %d", i).isEqualTo((byte) (id * 31 + i));
        }
        assertThat(LoadBody.check(buf, 0, 5000, 5000)).isEqualTo(id);
        for (int i : new int[] {LoadBody.HEADER, 267, 268, 2000, 4999}) {
            ByteBuf damaged = buf.copy();
            damaged.setByte(i, damaged.getByte(i) + 1);
            assertThat(LoadBody.check(damaged, 0, 5000, 5000)).as("byte %d changed", i).isEqualTo(-1);
        }
    }

    @Test
    void aBodyIsReadWhereItLies() {
        ByteBuf buf = Unpooled.buffer().writeBytes(new byte[5]);
        LoadBody.write(buf, 9L, LoadBody.id(2, 3), 12);
        assertThat(LoadBody.check(buf, 5, 12, 12)).isEqualTo(LoadBody.id(2, 3));
        assertThat(LoadBody.sentAt(buf, 5)).isEqualTo(9L);
    }

    @Test
    void aSoleReceiverWantsEverySequenceOfEachSenderInTurn() {
        LoadBody.Order order = new LoadBody.Order(true);
        assertThat(order.accept(LoadBody.id(0, 0))).isTrue();
        assertThat(order.accept(LoadBody.id(1, 10))).isTrue();
        assertThat(order.accept(LoadBody.id(0, 1))).isTrue();
        assertThat(order.accept(LoadBody.id(1, 11))).isTrue();
        assertThat(order.accept(LoadBody.id(0, 3))).as("a gap").isFalse();
        assertThat(order.accept(LoadBody.id(0, 4))).isTrue();
        assertThat(order.accept(LoadBody.id(0, 4))).as("a duplicate").isFalse();
    }

    @Test
    void aCompetingReceiverAcceptsGapsButNotGoingBack() {
        LoadBody.Order order = new LoadBody.Order(false);
        assertThat(order.accept(LoadBody.id(0, 5))).isTrue();
        assertThat(order.accept(LoadBody.id(0, 9))).isTrue();
        assertThat(order.accept(LoadBody.id(0, 7))).isFalse();
        assertThat(order.accept(LoadBody.id(0, 8))).isTrue();
    }

    @Test
    void orderHoldsAcrossTheWrap() {
        LoadBody.Order order = new LoadBody.Order(true);
        long last = (1L << 24) - 1;
        assertThat(order.accept(LoadBody.id(4, last))).isTrue();
        assertThat(order.accept(LoadBody.id(4, last + 1))).isTrue();
        LoadBody.Order competing = new LoadBody.Order(false);
        assertThat(competing.accept(LoadBody.id(4, last - 1))).isTrue();
        assertThat(competing.accept(LoadBody.id(4, last + 3))).isTrue();
        assertThat(competing.accept(LoadBody.id(4, last))).isFalse();
    }
}
