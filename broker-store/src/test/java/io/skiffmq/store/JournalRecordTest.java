package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.codec.testing.RandomMessages;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The journal record format: round trips, and every torn or corrupt record detected. */
@ExtendWith(LeakDetection.class)
class JournalRecordTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void aPublishRecordKeepsTheMessageBytesExactly(long seed) throws Exception {
        byte[] message = new RandomMessages(seed).next().bytes;
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writePublish(out, 42, 1_000_000_007L, RecordDescriptor.FLAG_DURABLE, 3, "amq.topic", "a.b",
            RecordDescriptor.FORMAT_AMQP_1_0, Unpooled.wrappedBuffer(message));
        JournalRecord.Read read = JournalRecord.read(out);
        assertThat(read.type()).isEqualTo(RecordType.PUBLISH);
        assertThat(read.queueId()).isEqualTo(42);
        assertThat(read.sequence()).isEqualTo(1_000_000_007L);
        assertThat(read.flags()).isEqualTo(RecordDescriptor.FLAG_DURABLE);
        assertThat(read.deliveryCount()).isEqualTo(3);
        assertThat(read.exchange()).isEqualTo("amq.topic");
        assertThat(read.routingKey()).isEqualTo("a.b");
        assertThat(ByteBufUtil.getBytes(read.message())).isEqualTo(message);
        assertThat(out.isReadable()).isFalse();
    }

    @Test
    void everyOtherRecordTypeRoundTrips() throws Exception {
        ByteBuf out = Unpooled.buffer();
        for (RecordType type : EnumSet.complementOf(EnumSet.of(RecordType.PUBLISH))) {
            JournalRecord.write(out, type, 7, type.ordinal() * 10L, RecordDescriptor.FLAG_REDELIVERED, 2);
        }
        for (RecordType type : EnumSet.complementOf(EnumSet.of(RecordType.PUBLISH))) {
            JournalRecord.Read read = JournalRecord.read(out);
            assertThat(read.type()).isEqualTo(type);
            assertThat(read.sequence()).isEqualTo(type.ordinal() * 10L);
            assertThat(read.flags()).isEqualTo(RecordDescriptor.FLAG_REDELIVERED);
            assertThat(read.message()).isNull();
        }
        assertThat(RecordType.values()).extracting(RecordType::code).doesNotHaveDuplicates();
    }

    private static byte[] sampleRecord() {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writePublish(out, 1, 2, 0, 0, "", "q", RecordDescriptor.FORMAT_AMQP_1_0,
            Unpooled.wrappedBuffer(new RandomMessages(9).next().bytes));
        return ByteBufUtil.getBytes(out);
    }

    @Test
    void aFlipOfAnyByteIsDetected() {
        byte[] record = sampleRecord();
        for (int i = 0; i < record.length; i++) {
            byte[] corrupt = record.clone();
            corrupt[i] ^= 0x40;
            ByteBuf buf = Unpooled.wrappedBuffer(corrupt);
            int at = i;
            assertThatThrownBy(() -> JournalRecord.read(buf)).as("flip at %d", at).isInstanceOf(JournalRecord.Corrupt.class);
            assertThat(buf.readerIndex()).isZero();
        }
    }

    @Test
    void aRecordCutShortAnywhereIsDetectedAndTheGoodOnesBeforeItRead() throws Exception {
        byte[] record = sampleRecord();
        for (int cut = 0; cut < record.length; cut++) {
            ByteBuf buf = Unpooled.buffer();
            buf.writeBytes(record);
            buf.writeBytes(record, 0, cut);
            JournalRecord.read(buf);
            int at = cut;
            assertThatThrownBy(() -> JournalRecord.read(buf)).as("cut at %d", at)
                .isInstanceOf(JournalRecord.Corrupt.class);
        }
    }

    @Test
    void aRecordOfAnotherVersionIsRefused() {
        byte[] record = sampleRecord();
        record[RecordDescriptor.VERSION_OFFSET] = RecordDescriptor.VERSION + 1;
        assertThatThrownBy(() -> JournalRecord.read(Unpooled.wrappedBuffer(record))).hasMessageContaining("version " + (RecordDescriptor.VERSION + 1));
    }
}
