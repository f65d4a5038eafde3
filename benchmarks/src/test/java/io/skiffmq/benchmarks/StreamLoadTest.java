package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.stream.Codec;
import com.rabbitmq.stream.Message;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.codec.QpidProtonCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stream load tool's messages checked against the stream client's own AMQP 1.0 codec (proton-j), both ways, and
 * its figures from known counts. {@code StreamLoadFilterTest} runs it against a broker's stream port.
 */
class StreamLoadTest {
    private static final Codec CLIENT = new QpidProtonCodec();

    /** A message as the stream client frames it: its size, then its bytes. */
    private static ByteBuf framed(Codec.EncodedMessage message) {
        ByteBuf buf = Unpooled.buffer();
        message.writeTo(buf);
        assertThat(buf.readInt()).isEqualTo(message.getSize()).isEqualTo(buf.readableBytes());
        return buf;
    }

    private static byte[] body(long sentAt, int id, int size) {
        byte[] body = new byte[size];
        LoadBody.write(Unpooled.wrappedBuffer(body).clear(), sentAt, id, size);
        return body;
    }

    @ParameterizedTest
    @ValueSource(ints = {12, 255, 256, 1000})
    void whatItPublishesIsOneDataSectionTheClientsCodecReads(int size) {
        StreamLoadCodec.Outgoing outgoing = new StreamLoadCodec.Outgoing(123_456_789L, LoadBody.id(3, 7), size, 42);
        ByteBuf buf = framed(new StreamLoadCodec(size).encode(outgoing));
        Message read = CLIENT.decode(buf, buf.readableBytes());
        byte[] body = read.getBodyAsBinary();
        assertThat(body).isEqualTo(body(123_456_789L, LoadBody.id(3, 7), size));
        assertThat(read.getProperties()).isNull();
        assertThat(read.getApplicationProperties()).isNull();
        assertThat(outgoing.hasPublishingId()).isTrue();
        assertThat(outgoing.getPublishingId()).isEqualTo(42);
    }

    @ParameterizedTest
    @ValueSource(ints = {12, 300})
    void itReadsTheSendTimeOfWhatTheClientsCodecWrote(int size) {
        ByteBuf buf = framed(CLIENT.encode(CLIENT.messageBuilder().addData(body(987_654_321L, LoadBody.id(1, 5),
            size)).build()));
        Message read = new StreamLoadCodec(size).decode(buf, buf.readableBytes());
        assertThat(((StreamLoadCodec.Received) read).sentAt()).isEqualTo(987_654_321L);
        assertThat(buf.readableBytes()).isZero();
    }

    @Test
    void aDamagedOrForeignMessageIsCountedAsDamagedAndSkipped() {
        byte[] damaged = body(1L, LoadBody.id(0, 1), 64);
        damaged[40] ^= 1;
        ByteBuf buf = framed(CLIENT.encode(CLIENT.messageBuilder().addData(damaged).build()));
        assertThat(((StreamLoadCodec.Received) new StreamLoadCodec(64).decode(buf, buf.readableBytes())).sentAt())
            .isEqualTo(-1);
        assertThat(buf.readableBytes()).isZero();

        buf = framed(CLIENT.encode(CLIENT.messageBuilder().addData(body(1L, LoadBody.id(0, 1), 64)).build()));
        assertThat(((StreamLoadCodec.Received) new StreamLoadCodec(65).decode(buf, buf.readableBytes())).sentAt())
            .as("another size than the run's").isEqualTo(-1);

        buf = framed(CLIENT.encode(CLIENT.messageBuilder().properties().messageId(7L).messageBuilder()
            .addData(body(1L, LoadBody.id(0, 1), 64)).build()));
        int length = buf.readableBytes();
        assertThat(((StreamLoadCodec.Received) new StreamLoadCodec(64).decode(buf, length)).sentAt())
            .as("a message with properties first").isEqualTo(-1);
        assertThat(buf.readableBytes()).isZero();
    }

    @Test
    void theFiguresComeFromTheCountsOfTheMeasuredWindow() {
        Map<String, String> options = StreamLoad.defaults();
        StreamLoad.Result consumed = new StreamLoad.Result(options, 2.0, 1_000_000, 3_000_000, 30_000, 36_000_000, 0,
            new Histogram(3), new Histogram(3), 1.5, 0.6);
        assertThat(consumed.confirmedRate()).isEqualTo(500_000);
        assertThat(consumed.rate()).isEqualTo(1_500_000);
        assertThat(consumed.messagesPerChunk()).isEqualTo(100);
        assertThat(consumed.brokerMicros()).isEqualTo(0.5);
        assertThat(consumed.toolMicros()).isEqualTo(0.2);
        assertThat(consumed.toolCeiling()).isEqualTo(5_000_000);
        assertThat(consumed.describe()).contains("consumed 1,500,000 msg/s").contains("100.0 msg per chunk")
            .contains("broker 0.50 µs").contains("0 errors");

        StreamLoad.Result publishOnly = new StreamLoad.Result(options, 4.0, 800_000, 0, 0, 0, 2, new Histogram(3),
            new Histogram(3), -1, 0.4);
        assertThat(publishOnly.rate()).isEqualTo(200_000);
        assertThat(publishOnly.brokerMicros()).isEqualTo(-1);
        assertThat(publishOnly.toolMicros()).isEqualTo(0.5);
    }

    @Test
    void offsetsAreReadAsTheClientNamesThem() {
        assertThat(StreamLoad.offset("first")).isEqualTo(OffsetSpecification.first());
        assertThat(StreamLoad.offset("last")).isEqualTo(OffsetSpecification.last());
        assertThat(StreamLoad.offset("next")).isEqualTo(OffsetSpecification.next());
        assertThat(StreamLoad.offset("1234")).isEqualTo(OffsetSpecification.offset(1234));
        assertThat(StreamLoad.offset("timestamp:1700000000000"))
            .isEqualTo(OffsetSpecification.timestamp(1_700_000_000_000L));
        assertThatThrownBy(() -> StreamLoad.offset("yesterday")).isInstanceOf(NumberFormatException.class);
    }
}
