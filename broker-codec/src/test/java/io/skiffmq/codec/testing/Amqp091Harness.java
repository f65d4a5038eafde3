package io.skiffmq.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp091.Amqp091ProtocolHeader;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp091.ContentHeader;
import io.skiffmq.codec.amqp091.DecodeFailure;
import io.skiffmq.codec.amqp091.MethodCodec;
import java.util.Arrays;

/**
 * Runs untrusted bytes through the AMQP 0-9-1 decoders the way the broker will: an optional protocol header, then
 * frames, each method decoded and each content header's properties summarized and decoded. Returns null for a
 * clean decode or the {@link DecodeFailure} that stopped it, and lets anything else escape, which is the bug the
 * hostile-input test and the fuzz target look for. Every buffer is released, so the leak detector can judge.
 */
public final class Amqp091Harness {
    /** Frame-max for harness runs: RabbitMQ's default, so large tables and property lists get decoded. */
    public static final int FRAME_MAX = 131_072;

    private Amqp091Harness() {
    }

    /** The whole input in one read. */
    public static DecodeFailure connection(byte[] input) {
        return connection(input, input.length);
    }

    /** The input in two reads, split at {@code split}, in buffers the leak detector tracks. */
    public static DecodeFailure connection(byte[] input, int split) {
        return connection(input, split, PooledByteBufAllocator.DEFAULT);
    }

    /**
     * The input in two reads, in buffers from {@code alloc}. At the paranoid leak detection level every read of a
     * tracked buffer records a stack trace; to measure what decoding itself allocates, pass an allocator with the
     * leak detector off ({@code new UnpooledByteBufAllocator(false, true)}).
     */
    public static DecodeFailure connection(byte[] input, int split, ByteBufAllocator alloc) {
        Amqp091FrameDecoder decoder = new Amqp091FrameDecoder();
        decoder.frameMax(FRAME_MAX);
        EmbeddedChannel channel = new EmbeddedChannel(decoder, new FrameReader());
        FrameReader reader = channel.pipeline().get(FrameReader.class);
        int start = 0;
        if (input.length >= Amqp091ProtocolHeader.LENGTH && Arrays.equals(input, 0, Amqp091ProtocolHeader.LENGTH,
                Amqp091ProtocolHeader.bytes(), 0, Amqp091ProtocolHeader.LENGTH)) {
            start = Amqp091ProtocolHeader.LENGTH;
        }
        split = Math.max(start, Math.min(split, input.length));
        try {
            for (int[] part : new int[][] {{start, split}, {split, input.length}}) {
                if (part[1] > part[0] && channel.isActive()) {
                    ByteBuf buf = alloc.buffer(part[1] - part[0])
                        .writeBytes(input, part[0], part[1] - part[0]);
                    channel.writeInbound(buf);
                }
            }
            return reader.failure;
        } catch (DecoderException e) {
            if (e.getCause() instanceof Amqp091DecodeException decode) {
                return decode.failure();
            }
            throw e;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** What the 0-9-1 connection handler would do with each frame, short of acting on it. */
    private static final class FrameReader extends ChannelInboundHandlerAdapter {
        DecodeFailure failure;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Amqp091Frame frame = (Amqp091Frame) msg;
            try {
                if (failure != null) {
                    return;
                }
                switch (frame.type()) {
                    case Amqp091Frame.TYPE_METHOD -> MethodCodec.decode(frame.payload());
                    case Amqp091Frame.TYPE_HEADER -> {
                        ContentHeader header = ContentHeader.decode(frame.payload());
                        try {
                            BasicProperties.summarize(header.properties());
                            BasicProperties.decode(header.properties());
                        } finally {
                            header.release();
                        }
                    }
                    default -> {
                    }
                }
            } catch (Amqp091DecodeException e) {
                // the broker closes the connection here
                failure = e.failure();
                ctx.close();
            } finally {
                frame.release();
            }
        }
    }
}
