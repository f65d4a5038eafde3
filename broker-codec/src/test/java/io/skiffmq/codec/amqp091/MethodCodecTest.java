package io.skiffmq.codec.amqp091;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.impl.AMQImpl;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MethodCodecTest {

    static List<MethodSamples.Sample> samples() {
        return MethodSamples.all();
    }

    static byte[] encode(Method method) {
        ByteBuf out = Unpooled.buffer();
        MethodCodec.encode(method, out);
        return ByteBufUtil.getBytes(out);
    }

    static Method decode(byte[] payload) throws Amqp091DecodeException {
        ByteBuf in = Unpooled.wrappedBuffer(payload);
        Method method = MethodCodec.decode(in);
        assertThat(in.isReadable()).as("decode consumes the payload").isFalse();
        return method;
    }

    private static byte[] clientFrame(com.rabbitmq.client.impl.Method method, int channel) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        method.toFrame(channel).writeTo(new DataOutputStream(bytes));
        return bytes.toByteArray();
    }

    @Test
    void everyMethodOfTheSevenClassesHasSamples() {
        Set<String> names = samples().stream().map(s -> s.client().protocolMethodName()).collect(Collectors.toSet());
        assertThat(names).hasSize(64).contains("basic.nack", "connection.update-secret-ok", "exchange.unbind-ok",
            "confirm.select-ok", "connection.blocked", "basic.recover-async");
        assertThat(samples()).hasSize(128);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void roundTrips(MethodSamples.Sample sample) throws Exception {
        Method decoded = decode(encode(sample.ours()));
        assertThat(decoded).isEqualTo(sample.ours());
        assertThat(decoded.hasContent()).isEqualTo(sample.client().hasContent());
        if (sample.ours().getClass().getRecordComponents().length == 0) {
            assertThat(decode(encode(sample.ours()))).as("methods without arguments decode to one instance")
                .isSameAs(decoded);
        }
        assertThat(encode(decoded)).isEqualTo(encode(sample.ours()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void writesTheClientsExactFrame(MethodSamples.Sample sample) throws Exception {
        byte[] expected = clientFrame(sample.client(), 7);
        ByteBuf out = Unpooled.buffer();
        Amqp091FrameWriter.writeMethod(out, 7, sample.ours());
        assertThat(ByteBufUtil.hexDump(out)).isEqualTo(ByteBufUtil.hexDump(expected));
        assertThat(sample.ours().classId()).isEqualTo(sample.client().protocolClassId());
        assertThat(sample.ours().methodId()).isEqualTo(sample.client().protocolMethodId());
        assertThat(sample.ours().name()).isEqualTo(sample.client().protocolMethodName());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void clientBytesDecodeToOurRecordAndOursInTheClient(MethodSamples.Sample sample) throws Exception {
        byte[] frame = clientFrame(sample.client(), 1);
        byte[] payload = Arrays.copyOfRange(frame, 7, frame.length - 1);
        assertThat(decode(payload)).isEqualTo(sample.ours());

        com.rabbitmq.client.impl.Method read = AMQImpl.readMethodFrom(
            new DataInputStream(new ByteArrayInputStream(encode(sample.ours()))));
        // the client's methods without arguments compare by identity, and its maps print in hash order: compare
        // what it read by writing it out again
        assertThat(read.protocolMethodName()).isEqualTo(sample.client().protocolMethodName());
        byte[] again = clientFrame(read, 1);
        assertThat(decode(Arrays.copyOfRange(again, 7, again.length - 1))).isEqualTo(sample.ours());
    }

    @Test
    void hotMethodsByteForByte() throws Exception {
        // basic.publish: class 60 method 40, ticket 0, "amq.topic", "a.b", bits mandatory=1 immediate=0
        byte[] publish = hex("003c 0028 0000 09 616d712e746f706963 03 612e62 01");
        assertThat(encode(new BasicMethod.Publish("amq.topic", "a.b", true, false))).isEqualTo(publish);
        assertThat(decode(publish)).isEqualTo(new BasicMethod.Publish("amq.topic", "a.b", true, false));
        // basic.nack: delivery-tag 2^32+1, multiple and requeue share one octet (bits 0 and 1)
        byte[] nack = hex("003c 0078 0000000100000001 03");
        assertThat(encode(new BasicMethod.Nack(4_294_967_297L, true, true))).isEqualTo(nack);
        assertThat(decode(hex("003c 0078 0000000100000001 02"))).isEqualTo(new BasicMethod.Nack(4_294_967_297L,
            false, true));
        // basic.deliver: consumer tag, delivery tag, redelivered bit, then the strings after it
        byte[] deliver = hex("003c 003c 03 637467 0000000000000005 01 00 01 71");
        assertThat(encode(new BasicMethod.Deliver("ctg", 5, true, "", "q"))).isEqualTo(deliver);
        // queue.declare: five bits in one octet: passive=0 durable=1 exclusive=0 auto-delete=1 no-wait=1 -> 0x1a
        byte[] declare = hex("0032 000a 0000 01 71 1a 00000000");
        assertThat(encode(new QueueMethod.Declare("q", false, true, false, true, true, Map.of()))).isEqualTo(declare);
        // connection.tune: channel-max 2047, frame-max 131072, heartbeat 60
        assertThat(encode(new ConnectionMethod.Tune(2047, 131_072, 60))).isEqualTo(hex("000a 001e 07ff 00020000 003c"));
        // unsigned long above 2^31 (message-count)
        assertThat(decode(hex("0032 001f ffffffff"))).isEqualTo(new QueueMethod.PurgeOk(4_294_967_295L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void everyTruncationIsATypedError(MethodSamples.Sample sample) {
        byte[] whole = encode(sample.ours());
        for (int length = 0; length < whole.length; length++) {
            byte[] cut = Arrays.copyOf(whole, length);
            DecodeFailure expected = length < 4 ? DecodeFailure.MALFORMED_FRAME : DecodeFailure.BAD_ARGUMENTS;
            assertThatThrownBy(() -> decode(cut)).as("cut at %d", length)
                .isInstanceOfSatisfying(Amqp091DecodeException.class, e -> assertThat(e.failure()).isEqualTo(expected));
        }
        byte[] longer = Arrays.copyOf(whole, whole.length + 1);
        assertThatThrownBy(() -> decode(longer)).isInstanceOfSatisfying(Amqp091DecodeException.class,
            e -> assertThat(e.failure()).isEqualTo(DecodeFailure.BAD_ARGUMENTS));
    }

    @Test
    void unknownMethodsAreNotImplemented() {
        for (String payload : List.of("001e 000a", "000a 0063", "0055 000c", "ffff ffff", "003c 0079 00")) {
            assertThatThrownBy(() -> decode(hex(payload))).as(payload)
                .isInstanceOfSatisfying(Amqp091DecodeException.class, e -> {
                    assertThat(e.failure()).isEqualTo(DecodeFailure.UNKNOWN_METHOD);
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.NOT_IMPLEMENTED);
                });
        }
    }

    @Test
    void aTableThatFitsButDoesNotParseIsASyntaxError() {
        // exchange.declare whose arguments table holds one field of unknown type 'Z'
        byte[] payload = hex("0028 000a 0000 01 78 06 746f70696300 00 00000003 016b5a");
        byte[] fixed = Arrays.copyOf(payload, payload.length);
        assertThatThrownBy(() -> decode(fixed)).isInstanceOfSatisfying(Amqp091DecodeException.class,
            e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR));
    }

    @Test
    void badUtf8InAShortStringDecodesWithReplacement() throws Exception {
        Method m = decode(hex("003c 0015 02 c328"));
        assertThat(((BasicMethod.ConsumeOk) m).consumerTag()).isEqualTo("\ufffd(");
    }

    @Test
    void valuesThatDoNotFitAreRefusedOnEncodeLeavingTheBufferAsItWas() {
        ByteBuf out = Unpooled.buffer().writeByte(0x42);
        List<Method> bad = List.of(new BasicMethod.ConsumeOk("x".repeat(256)), new ConnectionMethod.Tune(65_536, 0, 0),
            new BasicMethod.Qos(-1, 0, false), new ConnectionMethod.Start(256, 0, Map.of(), "", ""),
            new QueueMethod.DeclareOk("q", 4_294_967_296L, 0));
        for (Method m : bad) {
            assertThatThrownBy(() -> Amqp091FrameWriter.writeMethod(out, 1, m)).as("%s", m)
                .isInstanceOf(IllegalArgumentException.class);
            assertThat(out.writerIndex()).isEqualTo(1);
        }
    }

    @Test
    void nullsAreWrittenEmpty() throws Exception {
        Method m = new ExchangeMethod.Declare("x", null, false, false, false, false, false, null);
        assertThat(decode(encode(m))).isEqualTo(new ExchangeMethod.Declare("x", "", false, false, false, false, false,
            Map.of()));
    }
}
