package io.skiffmq.server.cluster;

import static io.skiffmq.server.cluster.ReplicaSnapshotTest.enqueue;
import static io.skiffmq.server.cluster.ReplicaSnapshotTest.shown;
import static io.skiffmq.server.cluster.ReplicaSnapshotTest.written;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A quorum queue's state moving between queue groups (docs/quorum-queues.md, "Changing members"), without
 * processes: the group it leaves freezes it (its later commands refused, so never confirmed), the group it moves to
 * adopts its replica exactly, in parts that may come twice, from one leader or the next; once the queue changed there,
 * a late part brings nothing back, nor does a part of another move; a part of a newer move replaces an adoption not
 * served yet; snapshots keep what the moves left; a thawed queue takes commands again.
 */
class QueueMoveTest {
    private static final String GROUP = "g";
    private static final QueueCommands.Key Q = new QueueCommands.Key("/", "qq", 5);
    private static final long MOVE = 77;

    private static boolean command(ReplicatedQueues queues, long index, byte[]... commands) {
        return queues.applyCommand(GROUP, index, ByteBuffer.wrap(QueueCommands.batch(List.of(commands))));
    }

    private static void transfer(ReplicatedQueues queues, long index, long move, HeldMessages entries,
            int from, int to) {
        queues.transfer(GROUP, index, ByteBuffer.wrap(QueueCommands.batch(List.of(
            QueueCommands.adopt(Q, move, entries, from, to)))));
    }

    /** A queue of four messages, one settled, one returned twice, one dead-lettering, then frozen by {@link #MOVE}. */
    private static ReplicatedQueues frozen() throws Exception {
        ReplicatedQueues old = new ReplicatedQueues(Duration.ofSeconds(1));
        assertThat(command(old, 1, enqueue(Q, 1, -1, "one"), enqueue(Q, 2, -1, "two"),
            enqueue(Q, 3, 1_700_000_000_000L, "three"), enqueue(Q, 4, -1, "four"))).isTrue();
        assertThat(command(old, 2, QueueCommands.settle(Q, 1), QueueCommands.returned(Q, 2, 2, 2),
            QueueCommands.deadLettering(Q, 4, io.skiffmq.core.queue.DeadLetters.Reason.REJECTED))).isTrue();
        assertThat(command(old, 3, QueueCommands.freeze(Q, MOVE))).isTrue();
        return old;
    }

    @Test
    void aFrozenQueueRefusesItsCommandsAndIsAdoptedExactlyInPartsThatMayComeTwice() throws Exception {
        ReplicatedQueues old = frozen();
        List<String> state = shown(old, Q);
        assertThat(state).hasSize(3);
        assertThat(command(old, 4, enqueue(Q, 5, -1, "after the freeze"))).as("a deposed live queue's publish")
            .isFalse();
        assertThat(command(old, 5, QueueCommands.settle(Q, 2))).isFalse();
        assertThat(shown(old, Q)).isEqualTo(state);

        HeldMessages entries = old.replica(GROUP, Q).held();
        ReplicatedQueues adopter = new ReplicatedQueues(Duration.ofSeconds(1));
        transfer(adopter, 1, MOVE, entries, 0, 1);
        transfer(adopter, 2, MOVE, entries, 1, 3);
        transfer(adopter, 3, MOVE, entries, 0, 3); // sent again by the next leader of the group it left
        assertThat(shown(adopter, Q)).as("sequences, counts, expiry, mark, bytes").isEqualTo(state);

        // served there: a settlement, then a late part, or a part of an older move, changes nothing
        assertThat(command(adopter, 4, QueueCommands.settle(Q, 2))).isTrue();
        transfer(adopter, 5, MOVE, entries, 0, 3);
        transfer(adopter, 6, 55, entries, 0, 3);
        assertThat(shown(adopter, Q)).isEqualTo(state.subList(1, 3));

        // moved out of there again (frozen), then back: the new move's parts replace what was left
        assertThat(command(adopter, 7, QueueCommands.freeze(Q, 88))).isTrue();
        transfer(adopter, 8, 99, entries, 0, 1);
        assertThat(shown(adopter, Q)).isEqualTo(state.subList(0, 1));

        // abandoned instead: the group it was to leave thaws it
        assertThat(command(old, 6, QueueCommands.unfreeze(Q, MOVE))).isTrue();
        assertThat(command(old, 7, enqueue(Q, 5, -1, "after the thaw"))).isTrue();
        assertThat(shown(old, Q)).hasSize(4);
    }

    @Test
    void aPartOfANewerMoveReplacesAnAdoptionNotServedYet() throws Exception {
        ReplicatedQueues old = frozen();
        HeldMessages entries = old.replica(GROUP, Q).held();
        ReplicatedQueues adopter = new ReplicatedQueues(Duration.ofSeconds(1));
        transfer(adopter, 1, 55, entries, 0, 3); // an abandoned move's, then the queue changed where it was
        transfer(adopter, 2, MOVE, entries, 1, 3);
        assertThat(shown(adopter, Q)).isEqualTo(shown(old, Q).subList(1, 3));
        assertThat(adopter.replica(GROUP, Q).adopted()).isEqualTo(MOVE);
    }

    @Test
    void aSnapshotKeepsTheFreezeAndTheAdoption() throws Exception {
        ReplicatedQueues old = frozen();
        HeldMessages entries = old.replica(GROUP, Q).held();
        ReplicatedQueues restored = new ReplicatedQueues(Duration.ofSeconds(1));
        restored.restore(GROUP, new DataInputStream(new ByteArrayInputStream(written(old))));
        assertThat(command(restored, 9, enqueue(Q, 5, -1, "after the freeze"))).isFalse();
        assertThat(restored.replica(GROUP, Q).frozen()).isEqualTo(MOVE);

        ReplicatedQueues adopter = new ReplicatedQueues(Duration.ofSeconds(1));
        transfer(adopter, 1, MOVE, entries, 0, 3);
        assertThat(command(adopter, 2, QueueCommands.settle(Q, 2))).isTrue();
        ReplicatedQueues member = new ReplicatedQueues(Duration.ofSeconds(1));
        member.restore(GROUP, new DataInputStream(new ByteArrayInputStream(written(adopter))));
        transfer(member, 3, MOVE, entries, 0, 3); // late, after the snapshot
        assertThat(shown(member, Q)).isEqualTo(shown(adopter, Q)).hasSize(2);
    }
}
