package io.skiffmq.codec.amqp091;

import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class Amqp091FrameDecoderTest {

    static byte[] frame(int type, int channel, byte[] payload) {
        return ByteBuffer.allocate(8 + payload.length).put((byte) type).putShort((short) channel).putInt(payload.length)
            .put(payload).put((byte) 0xce).array();
    }

    private static ByteBuf buffer(byte[] bytes, int from, int to) {
        return PooledByteBufAllocator.DEFAULT.buffer(to - from).writeBytes(bytes, from, to - from);
    }

    /** Everything the channel emitted, as strings, releasing each frame. */
    static List<String> drain(EmbeddedChannel ch) {
        List<String> out = new ArrayList<>();
        for (Object msg; (msg = ch.readInbound()) != null; ) {
            Amqp091Frame f = (Amqp091Frame) msg;
            if (f.payload().isReadable()) {
                assertThat(f.payload().unwrap()).as("payload is a slice of the input, not a copy").isNotNull();
            }
            out.add(f.type() + "/" + f.channel() + ":" + ByteBufUtil.hexDump(f.payload()));
            f.release();
        }
        return out;
    }

    // basic.publish on channel 1, its content header (body 5 bytes, no properties), the body in two frames,
    // a heartbeat, then connection.close-ok on channel 0
    private static final byte[] CONVERSATION = concat(
        frame(1, 1, hex("003c 0028 0000 00 01 71 00")),
        frame(2, 1, hex("003c 0000 0000000000000005 0000")),
        frame(3, 1, hex("68656c")),
        frame(3, 1, hex("6c6f")),
        frame(8, 0, new byte[0]),
        frame(1, 0, hex("000a 0033")));

    private static final List<String> EXPECTED = List.of(
        "1/1:003c0028000000017100",
        "2/1:003c000000000000000000050000",
        "3/1:68656c",
        "3/1:6c6f",
        "8/0:",
        "1/0:000a0033");

    @Test
    void decodesAConversationFedWhole() {
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
        ch.writeInbound(buffer(CONVERSATION, 0, CONVERSATION.length));
        assertThat(drain(ch)).isEqualTo(EXPECTED);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void decodesTheSameConversationSplitAtEveryOffset() {
        for (int split = 1; split < CONVERSATION.length; split++) {
            EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
            ch.writeInbound(buffer(CONVERSATION, 0, split));
            List<String> out = drain(ch);
            ch.writeInbound(buffer(CONVERSATION, split, CONVERSATION.length));
            out.addAll(drain(ch));
            assertThat(out).as("split at %d", split).isEqualTo(EXPECTED);
            assertThat(ch.finish()).isFalse();
        }
    }

    @Test
    void decodesTheConversationOneByteAtATime() {
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
        List<String> out = new ArrayList<>();
        for (int i = 0; i < CONVERSATION.length; i++) {
            ch.writeInbound(buffer(CONVERSATION, i, i + 1));
            out.addAll(drain(ch));
        }
        assertThat(out).isEqualTo(EXPECTED);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void frameMaxCountsTheWholeFrameWithRabbitMqsSlack() {
        int frameMax = Amqp091FrameDecoder.DEFAULT_FRAME_MAX;
        // frame-max bytes in all, and the 8 more RabbitMQ tolerates: a payload of frame-max
        for (int payload : new int[] {frameMax - 8, frameMax}) {
            EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
            byte[] f = frame(3, 1, new byte[payload]);
            ch.writeInbound(buffer(f, 0, f.length));
            assertThat(drain(ch)).hasSize(1);
            ch.finish();
        }
    }

    @Test
    void acceptsLargerFramesOnceTuned() {
        Amqp091FrameDecoder decoder = new Amqp091FrameDecoder();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        decoder.frameMax(131_072);
        byte[] big = frame(3, 1, new byte[131_072 - 8]);
        ch.writeInbound(buffer(big, 0, big.length));
        assertThat(drain(ch)).hasSize(1);
        ch.finish();
        assertThatThrownBy(() -> decoder.frameMax(4096)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theInitialFrameMaxHoldsUntilTuned() {
        Amqp091FrameDecoder decoder = new Amqp091FrameDecoder(4096);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] fits = frame(1, 0, new byte[4096]); // 8 bytes over, within the slack
        ch.writeInbound(buffer(fits, 0, fits.length));
        assertThat(drain(ch)).hasSize(1);
        byte[] over = frame(1, 0, new byte[4097]);
        assertThatThrownBy(() -> ch.writeInbound(buffer(over, 0, over.length)))
            .hasCauseInstanceOf(Amqp091DecodeException.class);
        ch.finish();
        assertThatThrownBy(() -> new Amqp091FrameDecoder(4095)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new Amqp091FrameDecoder().frameMax()).isEqualTo(8192);
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
            Arguments.of("payload one byte over frame-max plus slack", hex("03 0001 00002001"),
                DecodeFailure.FRAME_TOO_LARGE),
            Arguments.of("size 4 GB", hex("01 0001 ffffffff"), DecodeFailure.FRAME_TOO_LARGE),
            Arguments.of("bad frame end", hex("03 0001 00000002 6869 cf"), DecodeFailure.BAD_FRAME_END),
            Arguments.of("frame end missing, next frame's type in its place", concat(hex("03 0001 00000001 68"),
                frame(8, 0, new byte[0])), DecodeFailure.BAD_FRAME_END),
            Arguments.of("unknown type 4", frame(4, 1, hex("00")), DecodeFailure.UNKNOWN_FRAME_TYPE),
            Arguments.of("type 0", frame(0, 0, new byte[0]), DecodeFailure.UNKNOWN_FRAME_TYPE),
            Arguments.of("AMQP 1.0 header mid-stream", hex("41 4d 51 50 00 01 00 00"),
                DecodeFailure.UNKNOWN_FRAME_TYPE),
            Arguments.of("heartbeat on channel 1", frame(8, 1, new byte[0]), DecodeFailure.HEARTBEAT_ON_CHANNEL),
            Arguments.of("heartbeat with a payload", frame(8, 0, hex("00")), DecodeFailure.MALFORMED_FRAME),
            Arguments.of("method frame of 3 bytes", frame(1, 1, hex("003c00")), DecodeFailure.MALFORMED_FRAME),
            Arguments.of("content header of 11 bytes", frame(2, 1, new byte[11]), DecodeFailure.MALFORMED_FRAME));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void rejectsAndThenDiscardsEverything(String name, byte[] bytes, DecodeFailure expected) {
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
        byte[] valid = frame(1, 1, hex("003c 0050 0000000000000001 00"));
        ch.writeInbound(buffer(valid, 0, valid.length));
        assertThat(drain(ch)).hasSize(1);
        assertThatThrownBy(() -> ch.writeInbound(buffer(bytes, 0, bytes.length)))
            .isInstanceOf(DecoderException.class)
            .cause().isInstanceOfSatisfying(Amqp091DecodeException.class, e -> {
                assertThat(e.failure()).isEqualTo(expected);
                assertThat(e.replyCode()).isEqualTo(expected.replyCode());
            });
        drain(ch);
        // valid frames and garbage after the error are discarded, not decoded, and not leaked
        ch.writeInbound(buffer(valid, 0, valid.length));
        ch.writeInbound(buffer(hex("ff ff ff ff ff ff ff ff"), 0, 8));
        assertThat(drain(ch)).isEmpty();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void failsOnTheHeaderBeforeThePayloadArrives() {
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
        assertThatThrownBy(() -> ch.writeInbound(buffer(hex("03 0001 7fffffff"), 0, 7)))
            .cause().isInstanceOfSatisfying(Amqp091DecodeException.class,
                e -> assertThat(e.failure()).isEqualTo(DecodeFailure.FRAME_TOO_LARGE));
        ch.finish();
    }

    @Test
    void framesAfterTheHandlerClosedTheChannelAreNotCut() {
        List<String> seen = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder(), new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                Amqp091Frame f = (Amqp091Frame) msg;
                seen.add(f.type() + "/" + f.channel());
                f.release();
                ctx.close(); // as the connection does after a protocol error found in a frame
            }
        });
        ch.writeInbound(buffer(CONVERSATION, 0, CONVERSATION.length));
        assertThat(seen).containsExactly("1/1");
        ch.finishAndReleaseAll();
    }

    @Test
    void protocolHeader() {
        ByteBuf in = PooledByteBufAllocator.DEFAULT.buffer().writeByte(0).writeBytes(Amqp091ProtocolHeader.bytes());
        try {
            assertThat(Amqp091ProtocolHeader.bytes()).isEqualTo(hex("41 4d 51 50 00 00 09 01"));
            assertThat(Amqp091ProtocolHeader.matches(in, 1)).isTrue();
            assertThat(Amqp091ProtocolHeader.matches(in, 0)).isFalse();
            assertThat(Amqp091ProtocolHeader.matches(in, 2)).as("fewer than 8 bytes").isFalse();
            assertThat(Amqp091ProtocolHeader.matches(in.setByte(8, 0), 1)).as("AMQP 0-9-0").isFalse();
        } finally {
            in.release();
        }
    }
}
