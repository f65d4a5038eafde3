package io.skiffmq.codec.amqp091;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * The methods that arrive once or more per message allocate the record and its strings, nothing more. Measured
 * per thread over many decodes after a warm-up, on an unpooled heap buffer (the leak detector does not track it,
 * so its stack traces are not counted). The bounds leave room for object headers, not for a copy of the input.
 */
class HotMethodAllocationTest {
    private static final int ROUNDS = 20_000;

    private static long bytesPerDecode(Method method) throws Exception {
        ByteBuf payload = Unpooled.buffer();
        MethodCodec.encode(method, payload);
        Object sink = null;
        for (int i = 0; i < ROUNDS; i++) {
            sink = MethodCodec.decode(payload.readerIndex(0));
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < ROUNDS; i++) {
            sink = MethodCodec.decode(payload.readerIndex(0));
        }
        long perDecode = (threads.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(sink).isEqualTo(method);
        return perDecode;
    }

    private static long bytesPerEncode(Method method) {
        ByteBuf out = Unpooled.buffer(256);
        for (int i = 0; i < ROUNDS; i++) {
            MethodCodec.encode(method, out.clear());
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < ROUNDS; i++) {
            MethodCodec.encode(method, out.clear());
        }
        return (threads.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
    }

    @Test
    void acknowledgementsAllocateOnlyTheirRecord() throws Exception {
        assertThat(bytesPerDecode(new BasicMethod.Ack(123_456_789L, true))).isLessThanOrEqualTo(32);
        assertThat(bytesPerDecode(new BasicMethod.Nack(123_456_789L, true, false))).isLessThanOrEqualTo(32);
        assertThat(bytesPerDecode(new BasicMethod.Reject(123_456_789L, true))).isLessThanOrEqualTo(32);
    }

    @Test
    void publishAndDeliverAllocateTheirRecordAndStrings() throws Exception {
        // record (24) + two strings of 9 and 3 ASCII bytes (24 + 16 + bytes each, rounded to 8)
        assertThat(bytesPerDecode(new BasicMethod.Publish("amq.topic", "a.b", false, false))).isLessThanOrEqualTo(160);
        assertThat(bytesPerDecode(new BasicMethod.Deliver("ctag-1", 7, false, "amq.topic", "a.b")))
            .isLessThanOrEqualTo(240);
    }

    @Test
    void encodingTheHotMethodsAllocatesNothing() {
        assertThat(bytesPerEncode(new BasicMethod.Ack(1, false))).isZero();
        assertThat(bytesPerEncode(new BasicMethod.Deliver("ctag-1", 7, false, "amq.topic", "a.b"))).isZero();
    }

    @Test
    void aRepeatedPublishIsThePreviousRecordAndAllocatesNothing() throws Exception {
        BasicMethod.Publish last = new BasicMethod.Publish("amq.topic", "a.b", true, false);
        ByteBuf payload = Unpooled.buffer();
        MethodCodec.encode(new BasicMethod.Publish("amq.topic", "a.b", true, false), payload);
        assertThat(Allocations.perCall(ROUNDS, () -> MethodCodec.decode(payload.readerIndex(0), last))).isZero();
        assertThat(MethodCodec.decode(payload.readerIndex(0), last)).isSameAs(last);
        assertThat(payload.isReadable()).isFalse();
    }

    @Test
    void aPublishThatDiffersFromThePreviousIsDecoded() throws Exception {
        BasicMethod.Publish last = new BasicMethod.Publish("amq.topic", "a.b", true, false);
        for (BasicMethod.Publish other : java.util.List.of(new BasicMethod.Publish("amq.topic", "a.c", true, false),
                new BasicMethod.Publish("amq.topi", "a.b", true, false),
                new BasicMethod.Publish("amq.topic", "a.b.", true, false),
                new BasicMethod.Publish("amq.topic", "a.b", false, false),
                new BasicMethod.Publish("amq.topic", "a.b", true, true),
                new BasicMethod.Publish("", "a.b", true, false),
                new BasicMethod.Publish("amq.topic", "", true, false))) {
            ByteBuf payload = Unpooled.buffer();
            MethodCodec.encode(other, payload);
            Object decoded = MethodCodec.decode(payload, last);
            assertThat(decoded).isEqualTo(other).isNotSameAs(last);
        }
        // the same names in other bytes: non-ASCII, and a byte left after the arguments (refused as before)
        BasicMethod.Publish accented = new BasicMethod.Publish("", "caf\u00e9", false, false);
        ByteBuf payload = Unpooled.buffer();
        MethodCodec.encode(accented, payload);
        assertThat(MethodCodec.decode(payload, accented)).isEqualTo(accented);
        ByteBuf longer = Unpooled.buffer();
        MethodCodec.encode(last, longer);
        longer.writeByte(0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MethodCodec.decode(longer, last))
            .isInstanceOf(Amqp091DecodeException.class);
    }
}
