package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;

/**
 * What a delivery's frame start costs: the transfer (with its tag), the header and the merged annotations, written
 * into a buffer of the allocator the broker's channels use (Netty 4.2's adaptive one), allocate nothing: that
 * buffer's {@code writeBytes(ByteBuf…)} allocates NIO views on every call. Measured per thread over many writes after
 * a warm-up; the leak detector's wrapper is bypassed, so its records are not counted.
 */
class DeliveryEncodingAllocationTest {
    private static final int ROUNDS = 20_000;

    @Test
    void shortCopiesAreExact() {
        ByteBuf src = Unpooled.buffer(200);
        for (int i = 0; i < 200; i++) {
            src.writeByte(i * 7);
        }
        for (int length = 0; length <= TypeWriter.SHORT_COPY + 8; length++) {
            for (int from = 0; from < 9; from++) {
                ByteBuf out = Unpooled.buffer(1).writeByte(0xee);
                TypeWriter.copy(out, src, from, length);
                assertThat(out.readableBytes()).isEqualTo(1 + length);
                assertThat(ByteBufUtil.equals(out, 1, src, from, length)).as("length %d from %d", length, from)
                    .isTrue();
                out.release();
            }
        }
        src.release();
    }

    @Test
    void writingADeliverysFrameStartAllocatesNothing() throws Exception {
        Message message = Message.Factory.create();
        message.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-client"), "yes")));
        message.setBody(new Data(new Binary(new byte[12])));
        byte[] encoded = new byte[256];
        ByteBuf bytes = Unpooled.wrappedBuffer(encoded, 0, message.encode(encoded, 0, encoded.length));
        MessageSections sections = MessageSections.scan(bytes);
        BrokerAnnotations added = new BrokerAnnotations().put("x-exchange", "").put("x-routing-key", "q1");
        TransferPerformative transfer = new TransferPerformative();
        ByteBuf tag = Unpooled.buffer(4, 4);

        // one buffer, cleared for each write: the leak detector records every allocation
        ByteBuf wrapper = new AdaptiveByteBufAllocator().directBuffer(256);
        ByteBuf out = wrapper.unwrap() != null ? wrapper.unwrap() : wrapper;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long allocated = 0;
        int written = 0;
        for (int round = 0; round < 2; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < ROUNDS; i++) {
                out.clear();
                transfer.reset();
                tag.clear().writeInt(i);
                transfer.handle(1).deliveryId(i).deliveryTag(tag, 0, 4).messageFormat(0).settled(false);
                PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 0, transfer, 0);
                DeliveryEncoder.writeAnnotations(out, sections, true, 4, -1, true, 0, added);
                written = out.readableBytes();
            }
            // the first round warms up (and fills the allocator's caches); the second is measured
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        wrapper.release();
        assertThat(written).as("frame header, transfer, header, client's and broker's annotations").isGreaterThan(60);
        assertThat(allocated / ROUNDS).isZero();
    }
}
