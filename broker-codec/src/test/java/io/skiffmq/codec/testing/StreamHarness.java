package io.skiffmq.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.skiffmq.codec.stream.Command;
import io.skiffmq.codec.stream.ConnectionCommand;
import io.skiffmq.codec.stream.CreditFrame;
import io.skiffmq.codec.stream.DecodeFailure;
import io.skiffmq.codec.stream.DeliverFrame;
import io.skiffmq.codec.stream.Peer;
import io.skiffmq.codec.stream.PublishConfirmFrame;
import io.skiffmq.codec.stream.PublishErrorFrame;
import io.skiffmq.codec.stream.PublishFrame;
import io.skiffmq.codec.stream.StoreOffsetFrame;
import io.skiffmq.codec.stream.StreamCodec;
import io.skiffmq.codec.stream.StreamDecodeException;
import io.skiffmq.codec.stream.StreamFrame;
import io.skiffmq.codec.stream.StreamFrameDecoder;

/**
 * Runs untrusted bytes through the stream protocol decoders the way a connection will: frames cut by
 * {@link StreamFrameDecoder} (8 KiB at most until an {@code open}, then 1 MiB), each decoded through
 * {@link StreamCodec} or read to the end through its flyweight. Returns null for a clean decode or the
 * {@link DecodeFailure} that stopped it, and lets anything else escape, which is the bug the hostile-input test and
 * the fuzz target look for. Every buffer is released, so the leak detector can judge.
 */
public final class StreamHarness {
    private StreamHarness() {
    }

    /** A server reading the whole input in one read. */
    public static DecodeFailure server(byte[] input) {
        return connection(Peer.CLIENT, input, input.length, PooledByteBufAllocator.DEFAULT);
    }

    /** A server reading the input in two reads, split at {@code split}. */
    public static DecodeFailure server(byte[] input, int split) {
        return connection(Peer.CLIENT, input, split, PooledByteBufAllocator.DEFAULT);
    }

    /**
     * The frames {@code sender} sends, in two reads, in buffers from {@code alloc}. At the paranoid leak detection
     * level every read of a tracked buffer records a stack trace; to measure what decoding itself allocates, pass an
     * allocator with the leak detector off ({@code new UnpooledByteBufAllocator(false, true)}).
     */
    public static DecodeFailure connection(Peer sender, byte[] input, int split, ByteBufAllocator alloc) {
        StreamFrameDecoder decoder = new StreamFrameDecoder(sender,
            sender == Peer.CLIENT ? StreamFrameDecoder.DEFAULT_INITIAL_FRAME_MAX : 0);
        FrameReader reader = new FrameReader(decoder);
        EmbeddedChannel channel = new EmbeddedChannel(decoder, reader);
        split = Math.max(0, Math.min(split, input.length));
        try {
            for (int[] part : new int[][] {{0, split}, {split, input.length}}) {
                if (part[1] > part[0] && channel.isActive()) {
                    channel.writeInbound(alloc.buffer(part[1] - part[0]).writeBytes(input, part[0], part[1] - part[0]));
                }
            }
            return reader.failure;
        } catch (DecoderException e) {
            if (e.getCause() instanceof StreamDecodeException decode) {
                return decode.failure();
            }
            throw e;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** What a connection would do with each frame, short of acting on it. */
    private static final class FrameReader extends ChannelInboundHandlerAdapter {
        private final StreamFrameDecoder decoder;
        private final PublishFrame publish = new PublishFrame();
        private final PublishConfirmFrame confirm = new PublishConfirmFrame();
        private final PublishErrorFrame error = new PublishErrorFrame();
        private final DeliverFrame deliver = new DeliverFrame();
        private final CreditFrame credit = new CreditFrame();
        private final StoreOffsetFrame storeOffset = new StoreOffsetFrame();
        DecodeFailure failure;
        /** Keeps the JIT from dropping reads whose results nobody uses. */
        long sink;

        FrameReader(StreamFrameDecoder decoder) {
            this.decoder = decoder;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                if (failure != null) {
                    return;
                }
                if (StreamCodec.isHot(StreamFrame.key(frame))) {
                    readHot(frame);
                } else {
                    Command command = StreamCodec.decode(frame);
                    if (command instanceof ConnectionCommand.Open) {
                        // as the server does once open succeeds
                        decoder.frameMax(StreamFrameDecoder.DEFAULT_FRAME_MAX);
                    }
                }
            } catch (StreamDecodeException e) {
                // the connection closes here
                failure = e.failure();
                ctx.close();
            } finally {
                frame.release();
            }
        }

        private void readHot(ByteBuf frame) throws StreamDecodeException {
            switch (StreamFrame.command(frame)) {
                case PUBLISH -> {
                    publish.wrap(frame);
                    while (publish.next()) {
                        sink += publish.publishingId() + publish.messageLength() + publish.filterValueLength()
                            + publish.records() + publish.entryLength();
                        if (publish.hasFilterValue()) {
                            sink += publish.filterValue().length();
                        }
                    }
                }
                case PUBLISH_CONFIRM -> {
                    confirm.wrap(frame);
                    for (int i = 0; i < confirm.count(); i++) {
                        sink += confirm.publishingId(i);
                    }
                }
                case PUBLISH_ERROR -> {
                    error.wrap(frame);
                    for (int i = 0; i < error.count(); i++) {
                        sink += error.publishingId(i) + error.code(i);
                    }
                }
                case DELIVER -> {
                    deliver.wrap(frame);
                    sink += deliver.chunkId() + deliver.records() + deliver.committedChunkId() + deliver.dataLength();
                }
                case CREDIT -> sink += credit.wrap(frame).credit();
                case STORE_OFFSET -> sink += storeOffset.wrap(frame).offset() + storeOffset.stream().length();
                default -> throw new AssertionError(StreamFrame.command(frame));
            }
        }
    }
}
