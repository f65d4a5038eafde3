package io.skiffmq.codec.stream;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every command record: round trips, PROTOCOL.adoc's byte layouts, and what malformed fields fail with. */
class StreamCodecTest {

    static List<StreamSamples.Sample> samples() {
        return StreamSamples.commands();
    }

    /** Decodes a whole frame (size field included) as the decoder would hand it over. */
    static Command decode(byte[] frame) throws StreamDecodeException {
        assertThat(java.nio.ByteBuffer.wrap(frame).getInt()).as("size field").isEqualTo(frame.length - 4);
        ByteBuf in = Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
        Command command = StreamCodec.decode(in);
        assertThat(in.isReadable()).as("decode consumes the frame").isFalse();
        return command;
    }

    /** A frame from the hex of key, version and fields: the size field is put in front. */
    static byte[] framed(String hex) {
        byte[] rest = hex(hex);
        return java.nio.ByteBuffer.allocate(4 + rest.length).putInt(rest.length).put(rest).array();
    }

    static DecodeFailure failure(byte[] frame) {
        try {
            decode(frame);
            return null;
        } catch (StreamDecodeException e) {
            return e.failure();
        }
    }

    @Test
    void everyCommandAndResponseOfTheProtocolHasARecordOrAFlyweight() {
        Set<Integer> keys = samples().stream().map(s -> s.command().wireKey()).collect(Collectors.toSet());
        for (CommandKey k : CommandKey.values()) {
            boolean request = CommandKey.accepts(Peer.CLIENT, k.key(), 1) || CommandKey.accepts(Peer.SERVER, k.key(), 1);
            boolean response = CommandKey.accepts(Peer.CLIENT, k.responseKey(), 1)
                || CommandKey.accepts(Peer.SERVER, k.responseKey(), 1);
            assertThat(request).as("%s is sent by someone", k).isTrue();
            if (!StreamCodec.isHot(k.key())) {
                assertThat(keys).as("a sample of %s", k).contains(k.key());
            }
            if (response) {
                assertThat(keys).as("a sample of the response to %s", k).contains(k.responseKey());
            }
        }
        assertThat(CommandKey.values()).hasSize(31);
        assertThat(ResponseCode.values()).extracting(ResponseCode::code)
            .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, 0x15).boxed().toList());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void roundTrips(StreamSamples.Sample sample) throws Exception {
        byte[] frame = StreamSamples.frame(sample.command());
        assertThat(frame.length - 4).as("size field").isEqualTo(java.nio.ByteBuffer.wrap(frame).getInt());
        Command decoded = decode(frame);
        assertThat(decoded).isEqualTo(sample.command());
        assertThat(StreamSamples.frame(decoded)).isEqualTo(frame);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void everyPrefixFailsTypedOrIsItselfAValidFrame(StreamSamples.Sample sample) {
        byte[] frame = StreamSamples.frame(sample.command());
        for (int length = 4; length < frame.length; length++) {
            byte[] cut = Arrays.copyOf(frame, length);
            java.nio.ByteBuffer.wrap(cut).putInt(length - 4);
            try {
                Command decoded = decode(cut);
                // only optional trailing parts may be cut off: what remains must be how the record encodes
                assertThat(StreamSamples.frame(decoded)).as("cut to %d bytes", length).isEqualTo(cut);
            } catch (StreamDecodeException e) {
                assertThat(e.failure()).as("cut to %d bytes", length)
                    .isIn(DecodeFailure.BAD_FIELDS, DecodeFailure.BAD_VALUE, DecodeFailure.FRAME_TOO_SMALL);
                assertThat(e.responseCode()).isEqualTo(ResponseCode.UNKNOWN_FRAME);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void aByteAfterTheFieldsFails(StreamSamples.Sample sample) {
        byte[] frame = StreamSamples.frame(sample.command());
        byte[] longer = Arrays.copyOf(frame, frame.length + 1);
        java.nio.ByteBuffer.wrap(longer).putInt(longer.length - 4);
        assertThat(failure(longer)).isIn(DecodeFailure.BAD_FIELDS, DecodeFailure.BAD_VALUE);
    }

    @Test
    void subscribeCarriesAnOffsetValueOnlyForOffsetAndTimestamp() throws Exception {
        // PROTOCOL.adoc lists the offset for every type; RabbitMQ and the Java client write it for 4 and 5 only
        byte[] first = framed("0007 0001 0000000a 00 0006 6f7264657273 0001 000a");
        assertThat(decode(first)).isEqualTo(new ConsumerCommand.Subscribe(10, 0, "orders", OffsetSpec.FIRST, 10,
            Map.of()));
        byte[] offset = framed("0007 0001 0000000a 03 0006 6f7264657273 0004 0000000000000064 000a");
        assertThat(decode(offset)).isEqualTo(new ConsumerCommand.Subscribe(10, 3, "orders", OffsetSpec.offset(100), 10,
            Map.of()));
        // properties: an empty array is as good as none
        byte[] emptyProperties = framed("0007 0001 0000000a 00 0006 6f7264657273 0003 000a 00000000");
        assertThat(((ConsumerCommand.Subscribe) decode(emptyProperties)).properties()).isEmpty();
        assertThat(failure(framed("0007 0001 0000000a 00 0006 6f7264657273 0006 000a")))
            .as("offset type 6").isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(failure(framed("0007 0001 0000000a 00 0006 6f7264657273 0000 000a")))
            .as("offset type none, for consumer update responses only").isEqualTo(DecodeFailure.BAD_VALUE);
    }

    @Test
    void theResponsesWithoutCorrelationIdAndWithoutCode() throws Exception {
        // tune: no correlation id, as the Java client answers it
        assertThat(decode(framed("8014 0001 00100000 0000003c")))
            .isEqualTo(new ConnectionCommand.Tune(1_048_576, 60, true));
        // credit response: code then subscription id, no correlation id
        assertThat(decode(framed("8009 0001 0004 07")))
            .isEqualTo(new ConsumerCommand.CreditResponse(ResponseCode.SUBSCRIPTION_ID_DOES_NOT_EXIST, 7));
        // metadata response: no code; a stream RabbitMQ does not know has leader -1 and no replicas
        assertThat(decode(framed("800f 0001 00000009 00000001 0000 0009 6c6f63616c686f7374 000015b0"
                + "00000001 0001 78 0002 ffff 00000000")))
            .isEqualTo(new ManagementCommand.MetadataResponse(9,
                List.of(new ManagementCommand.Broker(0, "localhost", 5552)),
                List.of(new ManagementCommand.StreamMetadata("x", ResponseCode.STREAM_DOES_NOT_EXIST,
                    ManagementCommand.NO_LEADER, List.of()))));
    }

    @Test
    void openResponseAndSaslAuthenticateLeaveEmptyPartsOut() throws Exception {
        // RabbitMQ answers a refused open with the code alone
        assertThat(StreamSamples.frame(new ConnectionCommand.OpenResponse(4, ResponseCode.VIRTUAL_HOST_ACCESS_FAILURE,
            Map.of()))).isEqualTo(framed("8015 0001 00000004 000c"));
        // no SASL response is length -1, as the Java client writes it
        assertThat(decode(framed("0013 0001 00000003 0009 414e4f4e594d4f5553 ffffffff")))
            .isEqualTo(new ConnectionCommand.SaslAuthenticate(3, "ANONYMOUS", null));
        assertThat(decode(framed("8013 0001 00000003 000a 00000003 010203")))
            .isEqualTo(new ConnectionCommand.SaslAuthenticateResponse(3, ResponseCode.SASL_CHALLENGE,
                Bytes.wrap(new byte[] {1, 2, 3})));
        assertThat(failure(framed("0013 0001 00000003 0009 414e4f4e594d4f5553 fffffffe")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
    }

    @Test
    void lengthsAndCountsAreCheckedBeforeAnythingIsAllocated() {
        // a string of length -1 (null) where a name is needed: RabbitMQ reads 65,535 bytes and fails to match
        assertThat(failure(framed("000e 0001 00000001 ffff"))).isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(failure(framed("000e 0001 00000001 0005 6162"))).isEqualTo(DecodeFailure.BAD_FIELDS);
        // 2^31 - 1 streams in 0 bytes, and a negative count
        assertThat(failure(framed("000f 0001 00000001 7fffffff"))).isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(failure(framed("000f 0001 00000001 80000000"))).isEqualTo(DecodeFailure.BAD_VALUE);
        // a map of 3 pairs in 8 bytes: each pair takes 4 at least
        assertThat(failure(framed("0011 0001 00000001 00000003 0000 0000 0000 0000")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
        // command versions: 6 bytes each
        assertThat(failure(framed("001b 0001 00000001 00000002 0008 0001 0002")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
    }

    @Test
    void unknownKeysVersionsAndCodesFailTyped() {
        assertThat(failure(framed("0020 0001"))).isEqualTo(DecodeFailure.UNKNOWN_COMMAND);
        assertThat(failure(framed("0000 0001"))).isEqualTo(DecodeFailure.UNKNOWN_COMMAND);
        assertThat(failure(framed("0017 0002"))).as("heartbeat v2").isEqualTo(DecodeFailure.UNKNOWN_COMMAND);
        assertThat(failure(framed("8017 0001"))).as("a heartbeat response").isEqualTo(
            DecodeFailure.UNKNOWN_COMMAND);
        assertThat(failure(framed("8007 0001 00000001 0016"))).as("response code 0x16")
            .isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(failure(framed("801a 0001 00000001 0001"))).as("consumer update response without offset")
            .isEqualTo(DecodeFailure.BAD_FIELDS);
        assertThat(failure(framed("001a 0001 00000001 03 02"))).as("active 2")
            .isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(failure(framed("0017 00"))).isEqualTo(DecodeFailure.FRAME_TOO_SMALL);
    }

    @Test
    void theHotCommandsAreLeftToTheirFlyweights() {
        for (int key : new int[] {0x02, 0x03, 0x04, 0x08, 0x09, 0x0a}) {
            assertThat(StreamCodec.isHot(key)).isTrue();
            ByteBuf frame = Unpooled.buffer().writeShort(key).writeShort(1);
            assertThatThrownBy(() -> StreamCodec.decode(frame)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(StreamCodec.isHot(CommandKey.CREDIT.responseKey())).isFalse();
    }

    @Test
    void encodingRefusesValuesOutsideTheirTypesAndLeavesTheBufferAsItWas() {
        ByteBuf out = Unpooled.buffer().writeByte(7);
        assertThatThrownBy(() -> StreamFrameWriter.writeCommand(out,
            new PublisherCommand.DeclarePublisher(1, 256, "", "s"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StreamFrameWriter.writeCommand(out,
            new ManagementCommand.DeleteStream(1, "x".repeat(32_768)))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StreamFrameWriter.writeCommand(out, new ManagementCommand.DeleteStream(1, null)))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StreamFrameWriter.writeCommand(out,
            new ConnectionCommand.Tune(1L << 32, 0, false))).isInstanceOf(IllegalArgumentException.class);
        assertThat(ByteBufUtil.hexDump(out)).isEqualTo("07");
        assertThatThrownBy(() -> new Response(CommandKey.METADATA, 1, ResponseCode.OK))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetSpec(OffsetSpec.Type.FIRST, 3)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void directionsFollowWhoSendsEachCommand() {
        Set<CommandKey> fromClient = EnumSet.noneOf(CommandKey.class);
        Set<CommandKey> fromServer = EnumSet.noneOf(CommandKey.class);
        for (CommandKey k : CommandKey.values()) {
            if (CommandKey.accepts(Peer.CLIENT, k.key(), 1)) {
                fromClient.add(k);
            }
            if (CommandKey.accepts(Peer.SERVER, k.key(), 1)) {
                fromServer.add(k);
            }
        }
        assertThat(fromServer).containsExactlyInAnyOrder(CommandKey.PUBLISH_CONFIRM, CommandKey.PUBLISH_ERROR,
            CommandKey.DELIVER, CommandKey.METADATA_UPDATE, CommandKey.TUNE, CommandKey.CLOSE, CommandKey.HEARTBEAT,
            CommandKey.CONSUMER_UPDATE);
        assertThat(fromClient).doesNotContain(CommandKey.DELIVER, CommandKey.PUBLISH_CONFIRM,
            CommandKey.METADATA_UPDATE, CommandKey.CONSUMER_UPDATE).contains(CommandKey.TUNE, CommandKey.CLOSE);
        assertThat(CommandKey.accepts(Peer.CLIENT, 0x8014, 1)).as("the client's tune answer").isTrue();
        assertThat(CommandKey.accepts(Peer.CLIENT, 0x801a, 1)).as("the consumer update answer").isTrue();
        assertThat(CommandKey.accepts(Peer.SERVER, 0x801a, 1)).isFalse();
        assertThat(CommandKey.accepts(Peer.CLIENT, 0x0002, 2)).as("publish v2").isTrue();
        assertThat(CommandKey.accepts(Peer.CLIENT, 0x0002, 3)).isFalse();
        assertThat(CommandKey.accepts(Peer.SERVER, 0x0008, 2)).as("deliver v2").isTrue();
        assertThat(CommandKey.accepts(Peer.SERVER, 0x8008, 1)).as("deliver has no response").isFalse();
        assertThat(CommandKey.accepts(Peer.SERVER, 0x8007, 2)).as("responses are v1").isFalse();
    }
}
