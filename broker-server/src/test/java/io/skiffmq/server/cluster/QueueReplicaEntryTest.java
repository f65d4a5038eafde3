package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.Allocations;
import io.skiffmq.core.queue.DeadLetters;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import org.junit.jupiter.api.Test;

/**
 * A replica's entry of a message as published is its sequence and stored form alone (24 bytes with compressed
 * references); one delivered, returned, dead-lettered or expiring keeps its counts (56), and each reads back from a
 * snapshot as written.
 */
class QueueReplicaEntryTest {
    private static final int ROUNDS = 20_000;
    private static final byte[] STORED = {1, 2, 3};

    @Test
    void anEntryAsPublishedIsTwentyFourBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> QueueReplica.Entry.of(7, STORED, 0, 0, Long.MAX_VALUE, null)))
            .isLessThanOrEqualTo(24);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueReplica.Entry.of(7, STORED, 1, 1, Long.MAX_VALUE, null)))
            .as("one delivered").isLessThanOrEqualTo(56);
    }

    @Test
    void eachFormKeepsItsFieldsAndReadsBackAsWritten() throws Exception {
        QueueReplica.Entry[] entries = {
            QueueReplica.Entry.of(1, STORED, 0, 0, Long.MAX_VALUE, null),
            QueueReplica.Entry.of(2, STORED, 3, 0, Long.MAX_VALUE, null),
            QueueReplica.Entry.of(3, STORED, 0, 2, Long.MAX_VALUE, null),
            QueueReplica.Entry.of(4, STORED, 0, 0, 1_000, null),
            QueueReplica.Entry.of(5, STORED, 0, 0, Long.MAX_VALUE, DeadLetters.Reason.REJECTED),
        };
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            for (QueueReplica.Entry entry : entries) {
                entry.write(out);
            }
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
        for (QueueReplica.Entry written : entries) {
            QueueReplica.Entry read = QueueReplica.Entry.read(in);
            assertThat(read.sequence()).isEqualTo(written.sequence());
            assertThat(read.stored()).isEqualTo(STORED);
            assertThat(read.deliveryCount()).isEqualTo(written.deliveryCount());
            assertThat(read.returns()).isEqualTo(written.returns());
            assertThat(read.expiresAt()).isEqualTo(written.expiresAt());
            assertThat(read.deadLettering()).isEqualTo(written.deadLettering());
            assertThat(read.getClass()).isEqualTo(written.getClass());
        }
        assertThat(entries[1].deliveryCount()).isEqualTo(3);
        assertThat(entries[2].returns()).isEqualTo(2);
        assertThat(entries[3].expiresAt()).isEqualTo(1_000);
        assertThat(entries[4].deadLettering()).isEqualTo(DeadLetters.Reason.REJECTED);
        assertThat(entries[0].getClass()).isNotEqualTo(entries[1].getClass());
    }
}
