package io.skiffmq.codec.stream;

import static io.skiffmq.codec.stream.StreamCodecTest.framed;
import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StreamFrameDecoderTest {

    private static ByteBuf buffer(byte[] bytes, int from, int to) {
        return PooledByteBufAllocator.DEFAULT.buffer(to - from).writeBytes(bytes, from, to - from);
    }

    /** Everything the channel emitted, as hex from the key on, releasing each frame. */
    static List<String> drain(EmbeddedChannel ch) {
        List<String> out = new ArrayList<>();
        for (Object msg; (msg = ch.readInbound()) != null; ) {
            ByteBuf frame = (ByteBuf) msg;
            assertThat(frame.unwrap()).as("a slice of the input, not a copy").isNotNull();
            // at the paranoid leak level every read of a tracked buffer records a stack trace: big frames by size
            out.add(frame.readableBytes() > 1024 ? frame.readableBytes() + " bytes" : ByteBufUtil.hexDump(frame));
            frame.release();
        }
        return out;
    }

    private static final byte[] PEER_PROPERTIES = StreamSamples.frame(
        new ConnectionCommand.PeerProperties(1, Map.of("product", "client")));
    private static final byte[] PUBLISH = StreamSamples.publishV2(1, 1, 3);

    // what a client sends: peer properties, the tune answer, a heartbeat, a publish, credit and a close
    private static final byte[] CONVERSATION = concat(PEER_PROPERTIES,
        StreamSamples.frame(new ConnectionCommand.Tune(1_048_576, 60, true)), StreamSamples.heartbeat(), PUBLISH,
        StreamSamples.credit(1, 10), StreamSamples.frame(new ConnectionCommand.Close(9, 1, "OK")));

    private static List<String> expected() {
        List<String> frames = new ArrayList<>();
        for (byte[] f : List.of(PEER_PROPERTIES, StreamSamples.frame(new ConnectionCommand.Tune(1_048_576, 60, true)),
                StreamSamples.heartbeat(), PUBLISH, StreamSamples.credit(1, 10),
                StreamSamples.frame(new ConnectionCommand.Close(9, 1, "OK")))) {
            frames.add(ByteBufUtil.hexDump(f, 4, f.length - 4));
        }
        return frames;
    }

    /** A peer properties frame of {@code size} (the size field), its properties zeros. */
    private static byte[] bigFrame(int size) {
        return java.nio.ByteBuffer.allocate(4 + size).putInt(size).putShort((short) 0x11).putShort((short) 1).array();
    }

    private static StreamFrameDecoder opened() {
        StreamFrameDecoder decoder = StreamFrameDecoder.server();
        decoder.frameMax(StreamFrameDecoder.DEFAULT_FRAME_MAX);
        return decoder;
    }

    @Test
    void decodesAConversationFedWhole() {
        EmbeddedChannel ch = new EmbeddedChannel(opened());
        ch.writeInbound(buffer(CONVERSATION, 0, CONVERSATION.length));
        assertThat(drain(ch)).isEqualTo(expected());
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void decodesTheSameConversationSplitAtEveryOffset() {
        for (int split = 1; split < CONVERSATION.length; split++) {
            EmbeddedChannel ch = new EmbeddedChannel(opened());
            ch.writeInbound(buffer(CONVERSATION, 0, split));
            List<String> out = drain(ch);
            ch.writeInbound(buffer(CONVERSATION, split, CONVERSATION.length));
            out.addAll(drain(ch));
            assertThat(out).as("split at %d", split).isEqualTo(expected());
            assertThat(ch.finish()).isFalse();
        }
    }

    @Test
    void decodesTheConversationOneByteAtATime() {
        EmbeddedChannel ch = new EmbeddedChannel(opened());
        List<String> out = new ArrayList<>();
        for (int i = 0; i < CONVERSATION.length; i++) {
            ch.writeInbound(buffer(CONVERSATION, i, i + 1));
            out.addAll(drain(ch));
        }
        assertThat(out).isEqualTo(expected());
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void eightKibBeforeOpenCountingFromTheKey() {
        // RabbitMQ compares the size field, which leaves itself out, with frame-max
        byte[] atLimit = bigFrame(8192);
        assertThat(atLimit.length).isEqualTo(8192 + 4);
        EmbeddedChannel ch = new EmbeddedChannel(StreamFrameDecoder.server());
        ch.writeInbound(buffer(atLimit, 0, atLimit.length));
        assertThat(drain(ch)).hasSize(1);
        ch.finish();

        byte[] over = bigFrame(8193);
        StreamFrameDecoder decoder = StreamFrameDecoder.server();
        EmbeddedChannel refused = new EmbeddedChannel(decoder);
        // refused on the size field alone, before the body arrives
        assertThatThrownBy(() -> refused.writeInbound(buffer(over, 0, 4))).isInstanceOf(DecoderException.class)
            .hasCauseInstanceOf(StreamDecodeException.class)
            .cause().satisfies(e -> {
                assertThat(((StreamDecodeException) e).failure()).isEqualTo(DecodeFailure.FRAME_TOO_LARGE);
                assertThat(((StreamDecodeException) e).responseCode()).isEqualTo(ResponseCode.FRAME_TOO_LARGE);
            });
        assertThat(decoder.broken()).isTrue();
        refused.finish();
    }

    @Test
    void theConnectionRaisesFrameMaxAfterOpenAndZeroMeansNone() {
        StreamFrameDecoder decoder = StreamFrameDecoder.server();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        decoder.frameMax(1_048_576);
        byte[] big = bigFrame(1_048_576);
        ch.writeInbound(buffer(big, 0, big.length));
        assertThat(drain(ch)).hasSize(1);
        decoder.frameMax(0);
        byte[] bigger = bigFrame(3_000_000);
        ch.writeInbound(buffer(bigger, 0, bigger.length));
        assertThat(drain(ch)).hasSize(1);
        ch.finish();
        assertThatThrownBy(() -> decoder.frameMax(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decoder.frameMax(1L << 32)).isInstanceOf(IllegalArgumentException.class);
        // with no limit, a size past what a buffer holds is still too large
        EmbeddedChannel unlimited = new EmbeddedChannel(new StreamFrameDecoder(Peer.CLIENT, 0));
        byte[] huge = hex("fffffffc 0017 0001");
        assertThatThrownBy(() -> unlimited.writeInbound(buffer(huge, 0, huge.length)))
            .hasCauseInstanceOf(StreamDecodeException.class);
        unlimited.finish();
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
            Arguments.of("size 4 GB", hex("ffffffff 0002 0001"), DecodeFailure.FRAME_TOO_LARGE),
            Arguments.of("an AMQP 1.0 header", hex("414d5150 00010000"), DecodeFailure.FRAME_TOO_LARGE),
            Arguments.of("size 3", hex("00000003 001700"), DecodeFailure.FRAME_TOO_SMALL),
            Arguments.of("size 0", hex("00000000"), DecodeFailure.FRAME_TOO_SMALL),
            Arguments.of("key 0x20", framed("0020 0001"), DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("key 0", framed("0000 0001"), DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("publish v3", framed("0002 0003 01 00000000"), DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("version 0", framed("0017 0000"), DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("a deliver from the client", StreamSamples.deliver(1, 1, 0, StreamSamples.chunk(0, 1, 1)),
                DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("a confirm from the client", StreamSamples.confirm(1, 1), DecodeFailure.UNKNOWN_COMMAND),
            Arguments.of("a subscribe response from the client", framed("8007 0001 00000001 0001"),
                DecodeFailure.UNKNOWN_COMMAND));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void rejectsOnTheHeaderAndThenDiscardsEverything(String name, byte[] bytes, DecodeFailure expected) {
        StreamFrameDecoder decoder = opened();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] valid = StreamSamples.heartbeat();
        ch.writeInbound(buffer(valid, 0, valid.length));
        assertThat(drain(ch)).hasSize(1);
        // at most the size, key and version are needed to tell
        int header = Math.min(bytes.length, 8);
        assertThatThrownBy(() -> ch.writeInbound(buffer(bytes, 0, header)))
            .isInstanceOf(DecoderException.class)
            .cause().isInstanceOfSatisfying(StreamDecodeException.class, e -> assertThat(e.failure()).isEqualTo(expected));
        // the rest of that frame and a valid frame after it are discarded, not decoded, and not leaked
        ch.writeInbound(buffer(bytes, header, bytes.length));
        ch.writeInbound(buffer(valid, 0, valid.length));
        ch.writeInbound(buffer(PEER_PROPERTIES, 0, PEER_PROPERTIES.length));
        assertThat(drain(ch)).isEmpty();
        assertThat(decoder.broken()).isTrue();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aClientsDecoderTakesWhatAServerSends() {
        EmbeddedChannel ch = new EmbeddedChannel(new StreamFrameDecoder(Peer.SERVER, 0));
        byte[] deliver = StreamSamples.deliver(2, 1, 7, StreamSamples.chunk(0, 2, 3));
        byte[] frames = concat(StreamSamples.frame(new ConnectionCommand.Tune(1_048_576, 60, false)),
            StreamSamples.confirm(1, 1, 2), deliver, StreamSamples.frame(new ConsumerCommand.ConsumerUpdate(1, 1, true)));
        ch.writeInbound(buffer(frames, 0, frames.length));
        assertThat(drain(ch)).hasSize(4);
        byte[] publish = StreamSamples.publishV1(1, 1, 1);
        assertThatThrownBy(() -> ch.writeInbound(buffer(publish, 0, publish.length)))
            .hasCauseInstanceOf(StreamDecodeException.class);
        ch.finish();
    }
}
