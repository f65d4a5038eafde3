package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dead segment being written is left for a new one only once the journal has been idle since the last attempt. */
class IdleSegmentRollTest {
    @TempDir
    Path dir;

    private static ByteBuf publish(long sequence) {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writePublish(out, 1, sequence, RecordDescriptor.FLAG_DURABLE, 0, "", "q",
            RecordDescriptor.FORMAT_AMQP_1_0, Unpooled.wrappedBuffer(new byte[100]));
        return out;
    }

    /** Appends dead messages (published, then released) and waits until they are durable. */
    private static void appendDead(Journal journal, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            journal.release(journal.append(publish(i), true, null), 1);
        }
        journal.flush().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aDeadSegmentRollsOnlyAfterAnAttemptWithNothingWritten() throws Exception {
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            IdleSegmentRoll roll = new IdleSegmentRoll(journal, 1);
            long first = journal.writerSegment();
            appendDead(journal, 10);
            assertThat(roll.attempt()).as("the first attempt has no earlier one to compare with").isFalse();
            appendDead(journal, 10);
            assertThat(roll.attempt()).as("records written since the last attempt: busy, not rolled").isFalse();
            assertThat(roll.attempt()).as("nothing written since: idle, and every message dead").isTrue();
            assertThat(Journal.segmentOf(journal.append(publish(20), null))).isEqualTo(first + 1);
            journal.flush().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anIdleSegmentWithALiveMessageOrTooFewBytesStays() throws Exception {
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            IdleSegmentRoll small = new IdleSegmentRoll(journal, 1 << 20);
            appendDead(journal, 10);
            small.attempt();
            assertThat(small.attempt()).as("idle and dead, but under the size").isFalse();
            IdleSegmentRoll roll = new IdleSegmentRoll(journal, 1);
            long live = journal.append(publish(10), true, null);
            journal.flush().get(10, TimeUnit.SECONDS);
            roll.attempt();
            assertThat(roll.attempt()).as("idle, but a live message keeps it").isFalse();
            journal.release(live, 1);
            assertThat(roll.attempt()).isTrue();
        }
    }
}
