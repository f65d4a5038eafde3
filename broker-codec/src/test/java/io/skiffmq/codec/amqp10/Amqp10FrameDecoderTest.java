package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class Amqp10FrameDecoderTest {
    private static final byte[] SASL_HEADER = hex("41 4d 51 50 03 01 00 00");
    private static final byte[] AMQP_HEADER = hex("41 4d 51 50 00 01 00 00");

    static byte[] frame(int doff, int type, int channel, byte[] body) {
        int size = doff * 4 + body.length;
        ByteBuffer b = ByteBuffer.allocate(size).putInt(size).put((byte) doff).put((byte) type).putShort((short) channel);
        b.position(doff * 4);
        return b.put(body).array();
    }

    static byte[] frame(int type, int channel, byte[] body) {
        return frame(2, type, channel, body);
    }

    private static EmbeddedChannel channel(Set<ProtocolHeader> first) {
        return new EmbeddedChannel(new Amqp10FrameDecoder(first, Amqp10FrameDecoder.DEFAULT_INITIAL_MAX_FRAME_SIZE));
    }

    private static ByteBuf buffer(byte[] bytes, int from, int to) {
        return PooledByteBufAllocator.DEFAULT.buffer(to - from).writeBytes(bytes, from, to - from);
    }

    /** Everything the channel emitted, as strings, releasing each frame. */
    private static List<String> drain(EmbeddedChannel ch) {
        List<String> out = new ArrayList<>();
        for (Object msg; (msg = ch.readInbound()) != null; ) {
            if (msg instanceof AmqpFrame f) {
                assertThat(f.content().unwrap()).as("frame body is a slice of the input, not a copy").isNotNull();
                out.add("frame type=" + f.type() + " channel=" + f.channel() + " body=" + ByteBufUtil.hexDump(f.content()));
                f.release();
            } else {
                out.add(msg.toString());
            }
        }
        return out;
    }

    private static final byte[] CONVERSATION = concat(
        SASL_HEADER,
        frame(AmqpFrame.TYPE_SASL, 0, hex("00 53 41 c0 03 01 a3 00")),
        AMQP_HEADER,
        frame(AmqpFrame.TYPE_AMQP, 0, hex("00 53 10 c0 03 01 a1 00")),
        frame(AmqpFrame.TYPE_AMQP, 0, new byte[0]),
        frame(3, AmqpFrame.TYPE_AMQP, 7, hex("00 53 14 45 de ad be ef")));

    private static final List<String> EXPECTED = List.of(
        "SASL",
        "frame type=1 channel=0 body=005341c00301a300",
        "AMQP",
        "frame type=0 channel=0 body=005310c00301a100",
        "frame type=0 channel=0 body=",
        "frame type=0 channel=7 body=00531445deadbeef");

    @Test
    void decodesAConversationFedWhole() {
        EmbeddedChannel ch = channel(EnumSet.of(ProtocolHeader.SASL));
        ch.writeInbound(buffer(CONVERSATION, 0, CONVERSATION.length));
        assertThat(drain(ch)).isEqualTo(EXPECTED);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void decodesTheSameConversationSplitAtEveryOffset() {
        for (int split = 1; split < CONVERSATION.length; split++) {
            EmbeddedChannel ch = channel(EnumSet.of(ProtocolHeader.SASL));
            ch.writeInbound(buffer(CONVERSATION, 0, split));
            List<String> out = drain(ch);
            ch.writeInbound(buffer(CONVERSATION, split, CONVERSATION.length));
            out.addAll(drain(ch));
            assertThat(out).as("split at %d", split).isEqualTo(EXPECTED);
            ch.finish();
        }
    }

    @Test
    void decodesTheConversationOneByteAtATime() {
        EmbeddedChannel ch = channel(EnumSet.of(ProtocolHeader.SASL));
        List<String> out = new ArrayList<>();
        for (int i = 0; i < CONVERSATION.length; i++) {
            ch.writeInbound(buffer(CONVERSATION, i, i + 1));
            out.addAll(drain(ch));
        }
        assertThat(out).isEqualTo(EXPECTED);
        ch.finish();
    }

    @Test
    void acceptsLargerFramesOnceOpenNegotiatedThem() {
        Amqp10FrameDecoder decoder = new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.AMQP), 512);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] big = frame(AmqpFrame.TYPE_AMQP, 1, new byte[10_000]);
        ch.writeInbound(buffer(AMQP_HEADER, 0, 8));
        decoder.maxFrameSize(65_536);
        ch.writeInbound(buffer(big, 0, big.length));
        assertThat(drain(ch)).hasSize(2);
        ch.finish();
    }

    static Stream<Arguments> malformed() {
        byte[] valid = frame(AmqpFrame.TYPE_AMQP, 0, hex("00 53 10 45"));
        return Stream.of(
            Arguments.of("TLS header", EnumSet.of(ProtocolHeader.SASL), hex("41 4d 51 50 02 01 00 00"),
                DecodeFailure.UNSUPPORTED_PROTOCOL),
            Arguments.of("plain AMQP header where SASL is required", EnumSet.of(ProtocolHeader.SASL), AMQP_HEADER,
                DecodeFailure.UNSUPPORTED_PROTOCOL),
            Arguments.of("AMQP 0-9-1 header", EnumSet.of(ProtocolHeader.SASL), hex("41 4d 51 50 00 00 09 01"),
                DecodeFailure.UNSUPPORTED_PROTOCOL),
            Arguments.of("AMQP 1.1", EnumSet.of(ProtocolHeader.AMQP), hex("41 4d 51 50 00 01 01 00"),
                DecodeFailure.UNSUPPORTED_PROTOCOL),
            Arguments.of("HTTP, before 8 bytes arrived", EnumSet.of(ProtocolHeader.SASL), "GET".getBytes(),
                DecodeFailure.BAD_PROTOCOL_HEADER),
            Arguments.of("SASL header twice", EnumSet.of(ProtocolHeader.SASL), concat(SASL_HEADER, SASL_HEADER),
                DecodeFailure.UNSUPPORTED_PROTOCOL),
            Arguments.of("frame larger than the limit", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, hex("00 00 10 01 02 00 00 00")), DecodeFailure.FRAME_SIZE),
            Arguments.of("frame size 4GB", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, hex("ff ff ff ff 02 00 00 00")), DecodeFailure.FRAME_SIZE),
            Arguments.of("frame smaller than its header", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, hex("00 00 00 07 02 00 00 00")), DecodeFailure.FRAME_SIZE),
            Arguments.of("doff 1", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, hex("00 00 00 0c 01 00 00 00 00 53 10 45")), DecodeFailure.BAD_DOFF),
            Arguments.of("doff past the frame", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, hex("00 00 00 0c 04 00 00 00 00 53 10 45")), DecodeFailure.BAD_DOFF),
            Arguments.of("SASL frame after the AMQP header", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, frame(AmqpFrame.TYPE_SASL, 0, hex("00 53 41 45"))), DecodeFailure.BAD_FRAME_TYPE),
            Arguments.of("AMQP frame during SASL", EnumSet.of(ProtocolHeader.SASL), concat(SASL_HEADER, valid),
                DecodeFailure.BAD_FRAME_TYPE),
            Arguments.of("unknown frame type", EnumSet.of(ProtocolHeader.AMQP),
                concat(AMQP_HEADER, frame(5, 0, hex("00 53 10 45"))), DecodeFailure.BAD_FRAME_TYPE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void rejectsAndThenDiscardsEverything(String name, Set<ProtocolHeader> first, byte[] bytes, DecodeFailure expected) {
        EmbeddedChannel ch = channel(first);
        assertThatThrownBy(() -> ch.writeInbound(buffer(bytes, 0, bytes.length)))
            .isInstanceOf(DecoderException.class)
            .cause().isInstanceOfSatisfying(AmqpDecodeException.class, e -> {
                assertThat(e.failure()).isEqualTo(expected);
                assertThat(e.condition()).isEqualTo(AmqpError.FRAMING_ERROR);
            });
        drain(ch);
        // a valid frame after the error is discarded, not decoded, and not leaked
        byte[] after = frame(AmqpFrame.TYPE_AMQP, 0, hex("00 53 18 45"));
        ch.writeInbound(buffer(after, 0, after.length));
        assertThat(drain(ch)).isEmpty();
        ch.finish();
    }

    @Test
    void checksTheFrameHeaderBeforeTheBodyArrives() {
        EmbeddedChannel ch = channel(EnumSet.of(ProtocolHeader.AMQP));
        ch.writeInbound(buffer(AMQP_HEADER, 0, 8));
        byte[] header = hex("00 10 00 00 02 00 00 00");
        assertThatThrownBy(() -> ch.writeInbound(buffer(header, 0, header.length)))
            .cause().isInstanceOfSatisfying(AmqpDecodeException.class,
                e -> assertThat(e.failure()).isEqualTo(DecodeFailure.FRAME_SIZE));
        drain(ch);
        ch.finish();
    }

    /**
     * A large frame that comes in several reads while an earlier frame is still held is composed of the reads, not
     * copied at each one ({@link io.skiffmq.codec.FrameCumulator}): a byte changed in a read after decoding shows
     * in the frame. Small frames around it decode as before.
     */
    @Test
    void aLargeFrameInSeveralReadsIsComposedOfThemNotCopied() {
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.AMQP), 1 << 20));
        byte[] large = new byte[128 << 10];
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) i;
        }
        byte[] bytes = concat(AMQP_HEADER, frame(AmqpFrame.TYPE_AMQP, 0, hex("00 53 10")),
            frame(AmqpFrame.TYPE_AMQP, 1, large), frame(AmqpFrame.TYPE_AMQP, 2, hex("00 53 17")));
        ((Amqp10FrameDecoder) ch.pipeline().first()).maxFrameSize(1 << 20);
        List<ByteBuf> reads = new ArrayList<>();
        int first = AMQP_HEADER.length + 11 + (40 << 10); // the header, the small frame and 40 KiB of the large
        for (int from = 0, to = first; from < bytes.length; from = to, to = Math.min(bytes.length, to + (40 << 10))) {
            ByteBuf read = buffer(bytes, from, to);
            reads.add(read);
            ch.writeInbound(read.retain());
        }
        Object header = ch.readInbound();
        assertThat(header).isEqualTo(ProtocolHeader.AMQP);
        AmqpFrame small = ch.readInbound(); // held while the large frame comes in
        AmqpFrame frame = ch.readInbound();
        assertThat(frame.channel()).isEqualTo(1);
        assertThat(ByteBufUtil.getBytes(frame.content())).isEqualTo(large);
        ByteBuf lastRead = reads.get(reads.size() - 2); // wholly inside the large frame
        lastRead.setByte(0, lastRead.getByte(0) + 1);
        assertThat(ByteBufUtil.getBytes(frame.content())).as("the frame is the reads' bytes, not a copy")
            .isNotEqualTo(large);
        AmqpFrame after = ch.readInbound();
        assertThat(after.channel()).isEqualTo(2);
        assertThat(ByteBufUtil.hexDump(after.content())).isEqualTo("005317");
        small.release();
        frame.release();
        after.release();
        reads.forEach(ByteBuf::release);
        assertThat(ch.finish()).isFalse();
    }
}
