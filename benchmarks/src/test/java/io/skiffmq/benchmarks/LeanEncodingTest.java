package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.amqp10.TransferPerformative;
import org.junit.jupiter.api.Test;

/**
 * What the lean engine writes by hand reads back through the project's codec, and what its receiver finds in a
 * message is the body the sender wrote.
 */
class LeanEncodingTest {
    /** One frame as the sender writes it: frame header, transfer, message. */
    private static ByteBuf frame(boolean durable, int deliveryId, int bodySize, int bodyId) {
        return frame(durable, deliveryId, bodySize, bodyId, false);
    }

    private static ByteBuf frame(boolean durable, int deliveryId, int bodySize, int bodyId, boolean settled) {
        byte[] prefix = LeanSender.messagePrefix(durable, bodySize);
        ByteBuf frame = Unpooled.buffer();
        LeanSender.writeTransferHeader(frame, deliveryId, prefix.length + bodySize, settled);
        frame.writeBytes(prefix);
        LoadBody.write(frame, 77L, bodyId, bodySize);
        return frame;
    }

    @Test
    void theHandWrittenTransferIsTheOneTheCodecReads() throws Exception {
        ByteBuf frame = frame(true, 0x89ab_cdef, 12, LoadBody.id(3, 9));
        assertThat(frame.getInt(0)).isEqualTo(frame.readableBytes());
        assertThat(frame.getByte(4)).as("doff").isEqualTo((byte) 2);
        assertThat(frame.getShort(6)).as("channel").isZero();
        ByteBuf body = frame.slice(8, frame.readableBytes() - 8);
        Object decoded = new PerformativeCodec().decode(body);
        assertThat(decoded).isInstanceOf(TransferPerformative.class);
        TransferPerformative transfer = (TransferPerformative) decoded;
        assertThat(transfer.handle()).isZero();
        assertThat(transfer.deliveryId()).isEqualTo(0x89ab_cdefL);
        assertThat(transfer.deliveryTagLength()).isEqualTo(4);
        assertThat(transfer.deliveryTag().getInt(0)).isEqualTo(0x89ab_cdef);
        assertThat(transfer.messageFormat()).isZero();
        assertThat(transfer.settledSet()).isTrue();
        assertThat(transfer.settled()).isFalse();
        assertThat(transfer.more()).isFalse();
        assertThat(body.readerIndex()).as("the message follows the transfer")
            .isEqualTo(LeanSender.TRANSFER_FRAME_HEADER - 8);
    }

    @Test
    void aPresettledTransferSaysSo() throws Exception {
        ByteBuf frame = frame(false, 5, 12, LoadBody.id(0, 5), true);
        TransferPerformative transfer = (TransferPerformative) new PerformativeCodec()
            .decode(frame.slice(8, frame.readableBytes() - 8));
        assertThat(transfer.deliveryId()).isEqualTo(5);
        assertThat(transfer.settled()).isTrue();
    }

    @Test
    void theMessageHasAHeaderWithTheDurableFlagAndOneDataSection() throws Exception {
        for (boolean durable : new boolean[] {true, false}) {
            for (int size : new int[] {12, 255, 256, 5000}) {
                ByteBuf frame = frame(durable, 1, size, LoadBody.id(0, 1));
                ByteBuf message = frame.slice(LeanSender.TRANSFER_FRAME_HEADER,
                    frame.readableBytes() - LeanSender.TRANSFER_FRAME_HEADER);
                MessageSections sections = MessageSections.scan(message);
                assertThat(sections.durable()).isEqualTo(durable);
                assertThat(sections.has(SectionCode.HEADER)).isTrue();
                assertThat(sections.bodyCode()).isEqualTo(SectionCode.DATA);
                assertThat(sections.bodySectionCount()).isEqualTo(1);
            }
        }
    }

    @Test
    void theReceiverFindsTheBodyPastTheSectionsABrokerAdds() {
        byte[] prefix = LeanSender.messagePrefix(false, 12);
        ByteBuf message = Unpooled.buffer();
        // message-annotations {x-opt-a: "b"}, as a broker puts before the bare message
        message.writeBytes(new byte[] {0x00, 0x53, 0x72, (byte) 0xc1, 0x0d, 0x02, (byte) 0xa3, 0x07, 'x', '-', 'o',
            'p', 't', '-', 'a', (byte) 0xa1, 0x01, 'b'});
        message.writeBytes(prefix);
        int bodyAt = message.writerIndex();
        LoadBody.write(message, 5L, LoadBody.id(1, 2), 12);
        long data = LeanReceiver.dataSection(message, 0, message.writerIndex());
        assertThat((int) (data >>> 32)).isEqualTo(bodyAt);
        assertThat((int) data).isEqualTo(12);
        assertThat(LoadBody.check(message, bodyAt, 12, 12)).isEqualTo(LoadBody.id(1, 2));
    }

    @Test
    void aMessageWithoutADataSectionOrCutShortHasNoBody() {
        ByteBuf header = Unpooled.wrappedBuffer(new byte[] {0x00, 0x53, 0x70, (byte) 0xc0, 0x02, 0x01, 0x41});
        assertThat(LeanReceiver.dataSection(header, 0, header.writerIndex())).isEqualTo(-1);
        ByteBuf cut = frame(false, 1, 12, LoadBody.id(0, 0));
        assertThat(LeanReceiver.dataSection(cut, LeanSender.TRANSFER_FRAME_HEADER, cut.writerIndex() - 1))
            .isEqualTo(-1);
    }

    @Test
    void aMessageInSeveralFramesIsAcceptedOnlyOnceItsLastFrameCame() throws Exception {
        int bodySize = 5000;
        ByteBuf whole = frame(false, 7, bodySize, LoadBody.id(0, 0));
        int payload = LeanSender.TRANSFER_FRAME_HEADER;
        int middle = payload + (whole.writerIndex() - payload) / 2;
        LoadCounters counters = new LoadCounters();
        LeanReceiver receiver = new LeanReceiver(counters, "r",
            new LeanConnection.Endpoint("127.0.0.1", 5672, "guest", "guest", "q", false), 8, bodySize, true);
        EmbeddedChannel channel = new EmbeddedChannel(receiver);
        releaseAll(channel); // the SASL header

        // the first frame carries the delivery-id; a continuation may leave it out
        receiver.onTransfer(new TransferPerformative().handle(0).deliveryId(7).more(true), whole, payload, middle, 1);
        receiver.onReadBatchEnd();
        receiver.flush();
        assertThat(dispositions(channel)).as("nothing is accepted before the last frame").isZero();

        receiver.onTransfer(new TransferPerformative().handle(0), whole, middle, whole.writerIndex(), 2);
        receiver.onReadBatchEnd();
        receiver.flush();
        assertThat(dispositions(channel)).isEqualTo(1);
        assertThat(counters.errors.get()).isZero();
        assertThat(counters.received.get()).isEqualTo(1);
        whole.release();
        channel.finishAndReleaseAll();
    }

    private static void releaseAll(EmbeddedChannel channel) {
        for (Object out; (out = channel.readOutbound()) != null; ) {
            ReferenceCountUtil.release(out);
        }
    }

    /** The disposition frames written to {@code channel} since last asked. */
    private static int dispositions(EmbeddedChannel channel) throws Exception {
        int count = 0;
        for (ByteBuf out; (out = channel.readOutbound()) != null; ) {
            try {
                while (out.isReadable()) {
                    int size = out.readInt();
                    int doff = out.readUnsignedByte();
                    out.skipBytes(doff * 4 - 5);
                    ByteBuf body = out.readSlice(size - doff * 4);
                    if (body.isReadable() && new PerformativeCodec().decode(body) instanceof DispositionPerformative) {
                        count++;
                    }
                }
            } finally {
                out.release();
            }
        }
        return count;
    }
}
