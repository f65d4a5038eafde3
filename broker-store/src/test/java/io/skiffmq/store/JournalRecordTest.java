package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.testing.RandomMessages;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.zip.CRC32C;
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
    void publishAndRequeueRecordsKeepAQuorumQueuesCountOfReturns() throws Exception {
        ByteBuf bytes = Unpooled.wrappedBuffer(new RandomMessages(9).next().bytes);
        Message message = Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
        ByteBuf out = Unpooled.buffer();
        try {
            JournalRecord.writePublish(out, 7, 1, RecordDescriptor.FLAG_DURABLE, 3, 0, 1_000L, message);
            JournalRecord.writeRequeue(out, 7, 1, 3, 5);
            JournalRecord.write(out, RecordType.REQUEUE, 7, 1, 0, 4);
        } finally {
            message.release();
        }
        JournalRecord.Read publish = JournalRecord.read(out);
        assertThat(publish.deliveryCount()).isEqualTo(3);
        assertThat(publish.returns()).isZero();
        assertThat(publish.expiresAt()).isEqualTo(1_000L);
        assertThat(publish.flags()).isEqualTo(RecordDescriptor.FLAG_DURABLE | RecordDescriptor.FLAG_EXPIRES
            | RecordDescriptor.FLAG_RETURNS);
        JournalRecord.Read requeue = JournalRecord.read(out);
        assertThat(requeue.type()).isEqualTo(RecordType.REQUEUE);
        assertThat(requeue.deliveryCount()).isEqualTo(3);
        assertThat(requeue.returns()).isEqualTo(5);
        assertThat(JournalRecord.read(out).returns()).as("without the flag: none").isEqualTo(JournalRecord.NO_RETURNS);
    }

    @Test
    void aDeadLetteringRecordKeepsWhyTheMessageDied() throws Exception {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writeDeadLettering(out, 7, 12, 3);
        JournalRecord.Read read = JournalRecord.read(out);
        assertThat(read.type()).isEqualTo(RecordType.DEAD_LETTERING);
        assertThat(read.sequence()).isEqualTo(12);
        assertThat(read.reason()).isEqualTo(3);
    }

    @Test
    void everyOtherRecordTypeRoundTrips() throws Exception {
        ByteBuf out = Unpooled.buffer();
        EnumSet<RecordType> bodiless = EnumSet.complementOf(EnumSet.of(RecordType.PUBLISH, RecordType.ACKS,
            RecordType.DELIVERED, RecordType.DEAD_LETTERING));
        for (RecordType type : bodiless) {
            JournalRecord.write(out, type, 7, type.ordinal() * 10L, RecordDescriptor.FLAG_REDELIVERED, 2);
        }
        for (RecordType type : bodiless) {
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

    @Test
    void anAcksRecordKeepsItsRanges() throws Exception {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writeAcks(out, 9, new long[] {5, 100, Long.MAX_VALUE - 1, 0}, new int[] {3, 1, 2, 7}, 3);
        assertThat(out.getByte(RecordDescriptor.VERSION_OFFSET)).isEqualTo(RecordDescriptor.VERSION);
        JournalRecord.Read read = JournalRecord.read(out);
        assertThat(read.type()).isEqualTo(RecordType.ACKS);
        assertThat(read.queueId()).isEqualTo(9);
        assertThat(read.message()).isNull();
        assertThat(read.rangeCount()).as("only the ranges asked for").isEqualTo(3);
        assertThat(new long[] {read.rangeFirst(0), read.rangeFirst(1), read.rangeFirst(2)})
            .containsExactly(5, 100, Long.MAX_VALUE - 1);
        assertThat(new int[] {read.rangeLength(0), read.rangeLength(1), read.rangeLength(2)}).containsExactly(3, 1, 2);
        assertThat(out.isReadable()).isFalse();
        assertThatThrownBy(() -> JournalRecord.write(out, RecordType.ACKS, 9, 0, 0, 0))
            .isInstanceOf(IllegalArgumentException.class);
    }

    /** An ack record written by JournalRecord as of commit a957149 (version 2): queue 7, sequence 1. */
    private static final String V2_ACK = "02020000000000000000000700000000000000010000000000000000641f3794";

    @Test
    void aVersion2AckRecordStillReads() throws Exception {
        JournalRecord.Read read = JournalRecord.read(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(V2_ACK)));
        assertThat(read.type()).isEqualTo(RecordType.ACK);
        assertThat(read.queueId()).isEqualTo(7);
        assertThat(read.sequence()).isEqualTo(1);
    }

    @Test
    void anAcksRecordOfAnOlderVersionOrWithABadBodyIsCorrupt() {
        ByteBuf good = Unpooled.buffer();
        JournalRecord.writeAcks(good, 9, new long[] {5, 8}, new int[] {3, 1}, 2);
        byte[] record = ByteBufUtil.getBytes(good);

        byte[] version2 = record.clone();
        version2[RecordDescriptor.VERSION_OFFSET] = RecordDescriptor.VERSION_2;
        byte[] emptyRange = record.clone();
        emptyRange[RecordDescriptor.HEADER_LENGTH + 11] = 0; // the first range's count, 3, becomes 0
        byte[] halfRange = Arrays.copyOf(record, record.length - 4); // 20 bytes: not whole ranges
        ByteBuffer.wrap(halfRange).putInt(RecordDescriptor.LENGTH_OFFSET, 20);
        for (byte[] bad : new byte[][] {version2, emptyRange, halfRange}) {
            resign(bad);
            assertThatThrownBy(() -> JournalRecord.read(Unpooled.wrappedBuffer(bad)))
                .isInstanceOf(JournalRecord.Corrupt.class).hasMessageContaining("ACKS record");
        }
    }

    /** An expiry costs a record 8 bytes, and only a record of a message that expires (version 5). */
    @Test
    void aPublishRecordKeepsItsMessagesExpiryOnlyWhenItHasOne() throws Exception {
        byte[] message = new RandomMessages(3).next().bytes;
        ByteBuf bytes = Unpooled.wrappedBuffer(message);
        Message plain = Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "x", "k");
        ByteBuf never = Unpooled.buffer();
        ByteBuf expiring = Unpooled.buffer();
        try {
            JournalRecord.writePublish(never, 1, 2, RecordDescriptor.FLAG_DURABLE, 0, JournalRecord.NO_EXPIRY, plain);
            JournalRecord.writePublish(expiring, 1, 2, RecordDescriptor.FLAG_DURABLE, 0, 1_700_000_000_123L, plain);
        } finally {
            plain.release();
        }
        assertThat(expiring.readableBytes()).isEqualTo(never.readableBytes() + 8);
        JournalRecord.Read none = JournalRecord.read(never);
        JournalRecord.Read some = JournalRecord.read(expiring);
        assertThat(none.expiresAt()).isEqualTo(JournalRecord.NO_EXPIRY);
        assertThat(some.expiresAt()).isEqualTo(1_700_000_000_123L);
        assertThat(some.flags() & RecordDescriptor.FLAG_DURABLE).isNotZero();
        assertThat(ByteBufUtil.getBytes(some.message())).isEqualTo(ByteBufUtil.getBytes(none.message()))
            .isEqualTo(message);
    }

    @Test
    void theCleanStopTypesAreRefusedInRecordsOfEarlierVersions() throws Exception {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writeRanges(out, RecordType.DELIVERED, 4, new long[] {10, 20}, new int[] {2, 1}, 2);
        JournalRecord.write(out, RecordType.CLEAN_STOP, 0, 0, 0, 0);
        byte[] records = ByteBufUtil.getBytes(out);
        JournalRecord.Read delivered = JournalRecord.read(out);
        assertThat(delivered.type()).isEqualTo(RecordType.DELIVERED);
        assertThat(delivered.rangeCount()).isEqualTo(2);
        assertThat(delivered.rangeFirst(1)).isEqualTo(20);
        assertThat(delivered.rangeLength(0)).isEqualTo(2);
        assertThat(JournalRecord.read(out).type()).isEqualTo(RecordType.CLEAN_STOP);

        byte[] old = records.clone();
        old[RecordDescriptor.VERSION_OFFSET] = RecordDescriptor.VERSION_4;
        byte[] oldDelivered = java.util.Arrays.copyOf(old, records.length - RecordDescriptor.HEADER_LENGTH);
        resign(oldDelivered);
        assertThatThrownBy(() -> JournalRecord.read(Unpooled.wrappedBuffer(oldDelivered)))
            .isInstanceOf(JournalRecord.Corrupt.class).hasMessageContaining("DELIVERED record");
    }

    /** Sets a record's checksum to match its bytes, as the writer would have. */
    private static void resign(byte[] record) {
        CRC32C crc = new CRC32C();
        crc.update(record, 0, RecordDescriptor.CRC_OFFSET);
        crc.update(record, RecordDescriptor.HEADER_LENGTH, record.length - RecordDescriptor.HEADER_LENGTH);
        ByteBuffer.wrap(record).putInt(RecordDescriptor.CRC_OFFSET, (int) crc.getValue());
    }
}
