package io.skiffmq.codec.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The commands that come once or more per message are read and written without allocating: publish (100 messages
 * a frame, v1 and v2), confirm, error, credit, store offset, the deliver header and heartbeat. Measured per thread
 * over many rounds after a warm-up, on unpooled heap buffers the leak detector does not track (it records a stack
 * trace per read, which is not the codec's allocation). The frame decoder's own cost is one slice per frame.
 */
class StreamHotPathAllocationTest {
    private static final int ROUNDS = 20_000;

    private interface Work {
        long run() throws Exception;
    }

    private static long bytesPerRound(Work work) throws Exception {
        long sink = 0;
        for (int i = 0; i < ROUNDS; i++) {
            sink += work.run();
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < ROUNDS; i++) {
            sink += work.run();
        }
        long perRound = (threads.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(sink).isNotZero();
        return perRound;
    }

    private static ByteBuf emitted(byte[] frame) {
        return Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
    }

    @Test
    void readingPublishesAllocatesNothing() throws Exception {
        PublishFrame publish = new PublishFrame();
        for (byte[] bytes : new byte[][] {StreamSamples.publishV1(1, 0, 100), StreamSamples.publishV2(1, 0, 100)}) {
            ByteBuf frame = emitted(bytes);
            assertThat(bytesPerRound(() -> {
                publish.wrap(frame);
                long sum = 0;
                while (publish.next()) {
                    sum += publish.publishingId() + publish.messageIndex() + publish.messageLength()
                        + publish.filterValueIndex() + publish.entryLength() + publish.records();
                }
                return sum;
            })).isZero();
        }
    }

    @Test
    void readingTheOtherHotFramesAllocatesNothing() throws Exception {
        ByteBuf confirm = emitted(StreamSamples.confirm(1, 1, 2, 3, 4, 5));
        PublishConfirmFrame confirms = new PublishConfirmFrame();
        assertThat(bytesPerRound(() -> confirms.wrap(confirm).publishingId(4))).isZero();
        ByteBuf error = emitted(StreamSamples.error(1, 7, 8));
        PublishErrorFrame errors = new PublishErrorFrame();
        assertThat(bytesPerRound(() -> errors.wrap(error).publishingId(1) + errors.code(1))).isZero();
        ByteBuf credit = emitted(StreamSamples.credit(3, 10));
        CreditFrame credits = new CreditFrame();
        assertThat(bytesPerRound(() -> credits.wrap(credit).credit())).isZero();
        ByteBuf storeOffset = emitted(StreamSamples.storeOffset("app-1", "orders", 1_000));
        StoreOffsetFrame offsets = new StoreOffsetFrame();
        assertThat(bytesPerRound(() -> offsets.wrap(storeOffset).offset() + offsets.streamIndex())).isZero();
        ByteBuf deliver = emitted(StreamSamples.deliver(2, 1, 7, StreamSamples.chunk(10, 3, 5)));
        DeliverFrame delivers = new DeliverFrame();
        assertThat(bytesPerRound(() -> delivers.wrap(deliver).chunkId() + delivers.committedChunkId())).isZero();
        ByteBuf heartbeat = emitted(StreamSamples.heartbeat());
        assertThat(bytesPerRound(() -> StreamCodec.decode(heartbeat.readerIndex(0)).version())).isZero();
    }

    @Test
    void writingTheHotFramesAllocatesNothing() throws Exception {
        ByteBuf out = Unpooled.buffer(64 * 1024);
        ByteBuf message = StreamSamples.message(1, 12);
        assertThat(bytesPerRound(() -> {
            out.clear();
            int start = PublishFrameWriter.beginConfirm(out, 1);
            for (long id = 0; id < 100; id++) {
                PublishFrameWriter.addConfirm(out, id);
            }
            return PublishFrameWriter.endConfirm(out, start);
        })).isZero();
        assertThat(bytesPerRound(() -> {
            out.clear();
            int start = PublishFrameWriter.beginError(out, 1);
            PublishFrameWriter.addError(out, 5, ResponseCode.PUBLISHER_DOES_NOT_EXIST);
            return PublishFrameWriter.endError(out, start);
        })).isZero();
        assertThat(bytesPerRound(() -> {
            out.clear();
            StreamFrameWriter.writeDeliverHeader(out, 1, 99, 1_000);
            StreamFrameWriter.writeDeliverHeader(out, 1, 1_000);
            StreamFrameWriter.writeCredit(out, 1, 1);
            StreamFrameWriter.writeStoreOffset(out, "app-1", "orders", 42);
            StreamFrameWriter.writeHeartbeat(out);
            return out.writerIndex();
        })).isZero();
        assertThat(bytesPerRound(() -> {
            out.clear();
            int start = PublishFrameWriter.beginPublish(out, 2, 1);
            for (long id = 0; id < 100; id++) {
                PublishFrameWriter.addMessage(out, id, id % 2 == 0 ? "eu" : null, message);
            }
            PublishFrameWriter.endPublish(out, start, 100);
            return out.writerIndex();
        })).isZero();
    }

    @Test
    void theFrameDecoderAllocatesASlicePerFrameAndNothingPerMessage() throws Exception {
        byte[] publish = StreamSamples.publishV1(1, 0, 100);
        int frames = 100;
        ByteBuf input = Unpooled.buffer(publish.length * frames);
        for (int i = 0; i < frames; i++) {
            input.writeBytes(publish);
        }
        StreamFrameDecoder decoder = new StreamFrameDecoder(Peer.CLIENT, 0);
        EmbeddedChannel channel = new EmbeddedChannel(decoder, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ((ByteBuf) msg).release();
            }
        });
        long perRound = bytesPerRound(() -> {
            // the same 100 frames each round: the decoder releases its input once read, so keep it alive
            channel.writeInbound(input.retain().readerIndex(0));
            return 1;
        });
        assertThat(perRound / frames).as("bytes per frame of 100 messages").isLessThanOrEqualTo(64);
        assertThat(channel.finishAndReleaseAll()).isFalse();
        assertThat(input.release()).isTrue();
    }
}
