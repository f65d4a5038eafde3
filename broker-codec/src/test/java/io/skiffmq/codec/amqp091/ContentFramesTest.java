package io.skiffmq.codec.amqp091;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Content header and body frames: decoding keeps the publisher's bytes, encoding matches the RabbitMQ client. */
class ContentFramesTest {

    @Test
    void contentHeaderKeepsThePropertiesAsReceived() throws Exception {
        ByteBuf payload = PooledByteBufAllocator.DEFAULT.buffer()
            .writeBytes(hex("003c 0000 0000000100000000 1080 02 02 6964"));
        ContentHeader header = ContentHeader.decode(payload);
        try {
            assertThat(header.classId()).isEqualTo(60);
            assertThat(header.weight()).isZero();
            assertThat(header.bodySize()).isEqualTo(4_294_967_296L);
            assertThat(ByteBufUtil.hexDump(header.properties())).isEqualTo("1080020269" + "64");
            assertThat(header.properties().unwrap()).as("a slice, not a copy").isNotNull();
            assertThat(payload.readerIndex()).isZero();
            assertThat(payload.refCnt()).as("the properties hold the payload").isEqualTo(2);
            BasicProperties p = BasicProperties.decode(header.properties());
            assertThat(p.deliveryMode()).isEqualTo(2);
            assertThat(p.messageId()).isEqualTo("id");
        } finally {
            header.release();
            payload.release();
        }
        assertThat(payload.refCnt()).isZero();
    }

    @Test
    void contentHeaderFailures() {
        assertThatThrownBy(() -> ContentHeader.decode(Unpooled.wrappedBuffer(new byte[11])))
            .isInstanceOfSatisfying(Amqp091DecodeException.class,
                e -> assertThat(e.failure()).isEqualTo(DecodeFailure.MALFORMED_FRAME));
        assertThatThrownBy(() -> ContentHeader.decode(Unpooled.wrappedBuffer(hex("003c 0000 8000000000000000 0000"))))
            .isInstanceOfSatisfying(Amqp091DecodeException.class,
                e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR));
    }

    @Test
    void contentHeaderFrameIsTheClientsByteForByte() throws Exception {
        AMQP.BasicProperties client = new AMQP.BasicProperties.Builder().contentType("text/plain").deliveryMode(2)
            .priority(5).correlationId("c-1").headers(Map.of("k", 42)).timestamp(new Date(1_700_000_000_000L))
            .appId("app").build();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        client.toFrame(3, 1234).writeTo(new DataOutputStream(expected));

        BasicProperties ours = new BasicProperties("text/plain", null, Map.of("k", 42), 2, 5, "c-1", null, null,
            null, java.time.Instant.ofEpochSecond(1_700_000_000L), null, null, "app", null);
        ByteBuf out = Unpooled.buffer();
        Amqp091FrameWriter.writeContentHeader(out, 3, 60, 1234, ours);
        assertThat(ByteBufUtil.hexDump(out)).isEqualTo(ByteBufUtil.hexDump(expected.toByteArray()));

        // the same frame from the publisher's property bytes, as a delivery re-emits them
        ByteBuf props = Unpooled.buffer();
        ours.encode(props);
        ByteBuf again = Unpooled.buffer();
        Amqp091FrameWriter.writeContentHeader(again, 3, 60, 1234, props);
        assertThat(again).isEqualTo(out);
        assertThat(props.readerIndex()).isZero();
    }

    @Test
    void methodAndHeartbeatFramesDecodeThroughTheDecoder() throws Exception {
        ByteBuf out = PooledByteBufAllocator.DEFAULT.buffer();
        Amqp091FrameWriter.writeMethod(out, 9, new BasicMethod.Ack(77, true));
        Amqp091FrameWriter.writeHeartbeat(out);
        assertThat(ByteBufUtil.hexDump(out, 0, 7)).as("type, channel, size").isEqualTo("010009" + "0000000d");
        EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
        ch.writeInbound(out);
        Amqp091Frame method = ch.readInbound();
        try {
            assertThat(method.channel()).isEqualTo(9);
            assertThat(MethodCodec.decode(method.payload())).isEqualTo(new BasicMethod.Ack(77, true));
        } finally {
            method.release();
        }
        Amqp091Frame heartbeat = ch.readInbound();
        assertThat(heartbeat.type()).isEqualTo(Amqp091Frame.TYPE_HEARTBEAT);
        heartbeat.release();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void bodyIsSplitToFrameMax() {
        byte[] bytes = new byte[20_000];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 31);
        }
        ByteBuf body = PooledByteBufAllocator.DEFAULT.buffer().writeBytes(bytes);
        ByteBuf copied = PooledByteBufAllocator.DEFAULT.buffer();
        ByteBuf composite = Amqp091FrameWriter.bodyFrames(PooledByteBufAllocator.DEFAULT, 4, body, 8192);
        try {
            Amqp091FrameWriter.writeBody(copied, 4, body, 8192);
            assertThat(composite).as("zero-copy frames are the same bytes").isEqualTo(copied);
            assertThat(body.readerIndex()).isZero();
            assertThat(body.refCnt()).as("held by the composite's slices").isGreaterThan(1);

            EmbeddedChannel ch = new EmbeddedChannel(new Amqp091FrameDecoder());
            ch.writeInbound(copied.retain());
            List<Integer> sizes = new ArrayList<>();
            ByteBuf reassembled = Unpooled.buffer();
            for (Amqp091Frame f; (f = ch.readInbound()) != null; ) {
                assertThat(f.type()).isEqualTo(Amqp091Frame.TYPE_BODY);
                assertThat(f.channel()).isEqualTo(4);
                sizes.add(f.payload().readableBytes());
                reassembled.writeBytes(f.payload());
                f.release();
            }
            assertThat(sizes).containsExactly(8184, 8184, 3632);
            assertThat(ByteBufUtil.getBytes(reassembled)).isEqualTo(bytes);
            assertThat(ch.finish()).isFalse();
        } finally {
            composite.release();
            copied.release();
            body.release();
        }
        assertThat(body.refCnt()).isZero();
    }

    @Test
    void emptyBodyTakesNoFrame() {
        ByteBuf out = Unpooled.buffer();
        Amqp091FrameWriter.writeBody(out, 1, Unpooled.EMPTY_BUFFER, 8192);
        assertThat(out.isReadable()).isFalse();
        ByteBuf none = Amqp091FrameWriter.bodyFrames(PooledByteBufAllocator.DEFAULT, 1, Unpooled.EMPTY_BUFFER, 8192);
        assertThat(none.isReadable()).isFalse();
        none.release();
        assertThatThrownBy(() -> Amqp091FrameWriter.writeBody(out, 1, Unpooled.EMPTY_BUFFER, 8))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void replyCodesAreTheSpecsEachOnce() {
        assertThat(ReplyCode.values()).hasSize(19);
        assertThat(ReplyCode.of(404)).isEqualTo(ReplyCode.NOT_FOUND);
        assertThat(ReplyCode.NOT_FOUND.text()).isEqualTo("NOT_FOUND");
        assertThat(ReplyCode.NOT_FOUND.isConnectionError()).isFalse();
        assertThat(ReplyCode.of(501).isConnectionError()).isTrue();
        assertThat(ReplyCode.of(402).isConnectionError()).as("invalid-path is a hard error").isTrue();
        assertThat(ReplyCode.of(999)).isNull();
        assertThat(ReplyCode.of(-1)).isNull();
        // the client's constants, generated from the same spec
        assertThat(ReplyCode.PRECONDITION_FAILED.code()).isEqualTo(AMQP.PRECONDITION_FAILED);
        assertThat(ReplyCode.NOT_IMPLEMENTED.code()).isEqualTo(AMQP.NOT_IMPLEMENTED);
        assertThat(ReplyCode.RESOURCE_ERROR.code()).isEqualTo(AMQP.RESOURCE_ERROR);
        assertThat(Amqp091FrameDecoder.DEFAULT_FRAME_MAX).isEqualTo(AMQP.FRAME_MIN_SIZE);
    }

    @Test
    void aDeliverWrittenWithoutItsRecordIsTheSameFrame() {
        ByteBuf viaRecord = Unpooled.buffer();
        Amqp091FrameWriter.writeMethod(viaRecord, 5, new BasicMethod.Deliver("ctag-1", 1L << 40, true, "amq.topic",
            "a.b"));
        ByteBuf direct = Unpooled.buffer();
        Amqp091FrameWriter.writeDeliver(direct, 5, "ctag-1", 1L << 40, true, "amq.topic", "a.b");
        assertThat(ByteBufUtil.hexDump(direct)).isEqualTo(ByteBufUtil.hexDump(viaRecord));

        direct.clear().writeByte(0x7f);
        String tooLong = "k".repeat(256);
        assertThatThrownBy(() -> Amqp091FrameWriter.writeDeliver(direct, 5, "c", 1, false, "", tooLong))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(direct.readableBytes()).as("nothing left of the frame").isEqualTo(1);
    }
}
