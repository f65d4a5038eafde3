package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.InVhost;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.Map;
import io.skiffmq.core.definitions.DefinitionChange.PermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.UserDeleted;
import io.skiffmq.core.definitions.DefinitionChange.UserPut;
import io.skiffmq.core.definitions.DefinitionChange.VhostAdded;
import io.skiffmq.core.definitions.DefinitionChange.VhostLimitsSet;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The applier's side of the replicated definitions: entries, seeds, snapshots, and the broker it hands them to. */
class ReplicatedDefinitionsTest {
    private static final UserDefinition ALICE = new UserDefinition("alice", "h", "rabbit_password_hashing_sha256",
        List.of("management"), -1, 5);
    private static final UserDefinition GUEST = new UserDefinition("guest", "g", "rabbit_password_hashing_sha256",
        List.of("administrator"), -1, -1);

    /** What the broker is handed, in order. */
    private static final class Recorder implements ReplicatedDefinitions.Target {
        final List<Object> seen = new ArrayList<>();

        @Override
        public void applied(BrokerChange change) {
            seen.add(change);
        }

        final List<Map<String, List<VhostChange>>> vhosts = new ArrayList<>();

        @Override
        public void replaceAll(BrokerDefinitions definitions, Map<String, List<VhostChange>> shared) {
            seen.add(definitions);
            vhosts.add(shared);
        }
    }

    private static void apply(ReplicatedDefinitions applier, long index, BrokerChange change) {
        applier.apply(index, ReplicatedDefinitions.entry(change).asReadOnlyBuffer());
    }

    @Test
    void entriesAppliedBeforeTheBrokerAttachesAreHandedOverWholeAndLaterOnesOneByOne() {
        ReplicatedDefinitions applier = new ReplicatedDefinitions();
        apply(applier, 3, new VhostAdded(new VhostDefinition("v", -1, -1)));
        Recorder broker = new Recorder();
        applier.attach(broker);
        UserPut put = new UserPut(ALICE);
        apply(applier, 5, put);
        assertThat(broker.seen).containsExactly(
            new BrokerDefinitions(List.of(new VhostDefinition("v", -1, -1)), List.of(), List.of(), List.of()), put);
        assertThat(applier.definitions().users()).containsExactly(ALICE);
    }

    @Test
    void aSeedIsAppliedOnlyToDefinitionsWithNoVhostAndNoUser() {
        ReplicatedDefinitions applier = new ReplicatedDefinitions();
        List<BrokerChange> seed = List.of(new VhostAdded(new VhostDefinition("/", -1, -1)), new UserPut(GUEST),
            new PermissionSet(new PermissionDefinition("guest", "/", ".*", ".*", ".*")));
        applier.apply(1, ReplicatedDefinitions.seedEntry(seed));
        apply(applier, 2, new UserDeleted("guest"));
        // a second node's first-start definitions, committed after: they must not bring guest back
        applier.apply(3, ReplicatedDefinitions.seedEntry(seed));
        assertThat(applier.definitions().users()).isEmpty();
        assertThat(applier.definitions().vhosts()).extracting(VhostDefinition::name).containsExactly("/");
    }

    @Test
    void aSnapshotRebuildsTheDefinitionsOnAnotherNodeAndReplacesWhatItHad() throws Exception {
        ReplicatedDefinitions a = new ReplicatedDefinitions();
        apply(a, 1, new VhostAdded(new VhostDefinition("v", -1, -1)));
        apply(a, 2, new VhostLimitsSet("v", 10, 20));
        apply(a, 3, new UserPut(ALICE));
        apply(a, 4, new PermissionSet(new PermissionDefinition("alice", "v", "^a", ".*", "")));
        apply(a, 5, new TopicPermissionSet(new TopicPermissionDefinition("alice", "v", "amq.topic", "^x", ".*")));
        // a virtual host's shared definitions: in the snapshot too; those of a virtual host deleted since are not
        ExchangeDeclared x = new ExchangeDeclared(new Exchange("x", Exchange.Type.TOPIC, true, false, false,
            Map.of("alternate-exchange", "ae")));
        ExchangeDeclared y = new ExchangeDeclared(new Exchange("y", Exchange.Type.FANOUT));
        BindingAdded xy = new BindingAdded(new Binding("x", Destination.exchange("y"), "a.#", Map.of()));
        apply(a, 6, new InVhost("v", x));
        apply(a, 7, new InVhost("v", y));
        apply(a, 8, new InVhost("v", xy));
        apply(a, 9, new VhostAdded(new VhostDefinition("w", -1, -1)));
        apply(a, 10, new InVhost("w", x));
        apply(a, 11, new VhostDeleted("w"));
        apply(a, 12, new InVhost("w", y)); // committed after the deletion: nothing to apply it to
        assertThat(a.definitions("v")).containsExactly(x, y, xy);
        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        a.writeSnapshot(snapshot);

        ReplicatedDefinitions b = new ReplicatedDefinitions();
        Recorder broker = new Recorder();
        b.attach(broker);
        apply(b, 1, new UserPut(GUEST)); // what b had: gone with the snapshot
        b.installSnapshot(new ByteArrayInputStream(snapshot.toByteArray()));
        assertThat(b.definitions()).isEqualTo(a.definitions());
        assertThat(broker.seen).last().isEqualTo(a.definitions());
        assertThat(a.definitions().vhosts()).containsExactly(new VhostDefinition("v", 10, 20));
        assertThat(b.definitions("v")).containsExactly(x, y, xy);
        assertThat(b.definitions("w")).isEmpty();
        assertThat(broker.vhosts).last().isEqualTo(Map.of("v", List.of(x, y, xy)));

        b.reset();
        assertThat(b.definitions()).isEqualTo(BrokerDefinitions.EMPTY);
        assertThat(broker.seen).last().isEqualTo(BrokerDefinitions.EMPTY);
        assertThat(broker.vhosts).last().isEqualTo(Map.of());
    }

    @Test
    void aQueuesLeaderIsRecordedForANewerEpochOnlyKeptBySnapshotsAndForgottenWithTheQueue() throws Exception {
        ReplicatedDefinitions a = new ReplicatedDefinitions();
        QueueCommands.Key q = new QueueCommands.Key("v", "q", 7);
        QueueCommands.Key r = new QueueCommands.Key("v", "r", 8);
        apply(a, 1, new VhostAdded(new VhostDefinition("v", -1, -1)));
        a.apply(2, ReplicatedDefinitions.leaderEntry(q, "n1", 10).asReadOnlyBuffer());
        a.apply(3, ReplicatedDefinitions.leaderEntry(q, "n2", 20).asReadOnlyBuffer());
        a.apply(4, ReplicatedDefinitions.leaderEntry(q, "n1", 10).asReadOnlyBuffer()); // a late append, or a replay
        a.apply(5, ReplicatedDefinitions.leaderEntry(r, "n3", 5).asReadOnlyBuffer());
        a.apply(6, ReplicatedDefinitions.leaderEntry(new QueueCommands.Key("w", "q", 1), "n1", 1).asReadOnlyBuffer());
        assertThat(a.recordedLeader(q)).isEqualTo(new ReplicatedDefinitions.RecordedLeader("n2", 20));
        assertThat(a.recordedLeader(new QueueCommands.Key("w", "q", 1))).as("no such virtual host").isNull();
        apply(a, 7, new InVhost("v", new io.skiffmq.core.definitions.DefinitionChange.QueueDeleted("r")));
        assertThat(a.recordedLeader(r)).isNull();

        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        a.writeSnapshot(snapshot);
        ReplicatedDefinitions b = new ReplicatedDefinitions();
        b.installSnapshot(new ByteArrayInputStream(snapshot.toByteArray()));
        assertThat(b.recordedLeader(q)).isEqualTo(new ReplicatedDefinitions.RecordedLeader("n2", 20));
        b.apply(8, ReplicatedDefinitions.leaderEntry(q, "n2", 20).asReadOnlyBuffer()); // replayed after it
        assertThat(b.recordedLeader(q)).isEqualTo(new ReplicatedDefinitions.RecordedLeader("n2", 20));

        // a snapshot written before leaders were recorded ends after the changes (then an empty count of moves)
        byte[] bytes = snapshot.toByteArray();
        ReplicatedDefinitions c = new ReplicatedDefinitions();
        c.installSnapshot(new ByteArrayInputStream(java.util.Arrays.copyOf(bytes, bytes.length - 4 - 4
            - 4 - ReplicatedDefinitions.leaderEntry(q, "n2", 20).remaining())));
        assertThat(c.definitions()).isEqualTo(a.definitions());
        assertThat(c.recordedLeader(q)).isNull();
    }

    @Test
    void aMoveSetsTheMembersWhenItsFirstEndIsDoneAndSnapshotsKeepThemAndTheMoveUnderWay() throws Exception {
        ReplicatedDefinitions a = new ReplicatedDefinitions();
        QueueCommands.Key q = new QueueCommands.Key("v", "q", 7);
        QueueCommands.Key r = new QueueCommands.Key("v", "r", 8);
        apply(a, 1, new VhostAdded(new VhostDefinition("v", -1, -1)));
        a.apply(2, ReplicatedDefinitions.leaderEntry(q, "n1", 10).asReadOnlyBuffer());
        a.apply(3, ReplicatedDefinitions.moveEntry(true, q, 41, List.of("n1", "n2", "n3"), false));
        assertThat(a.pendingMove(q)).isEqualTo(new ReplicatedDefinitions.Move(41, List.of("n1", "n2", "n3")));
        assertThat(a.memberSet(q)).as("not before it ends").isNull();
        a.apply(4, ReplicatedDefinitions.moveEntry(false, q, 40, List.of(), true)); // another move's: nothing
        assertThat(a.memberSet(q)).isNull();
        a.apply(5, ReplicatedDefinitions.moveEntry(false, q, 41, List.of(), true));
        a.apply(6, ReplicatedDefinitions.moveEntry(false, q, 41, List.of(), false)); // a later end: nothing
        assertThat(a.memberSet(q)).isEqualTo(List.of("n1", "n2", "n3"));
        assertThat(a.pendingMove(q)).isNull();
        assertThat(a.recordedLeader(q)).as("the old group's leader and epochs go").isNull();

        a.apply(7, ReplicatedDefinitions.moveEntry(true, r, 50, List.of("n2"), false));
        a.apply(8, ReplicatedDefinitions.moveEntry(false, r, 50, List.of(), false)); // abandoned
        assertThat(a.memberSet(r)).isNull();
        a.apply(9, ReplicatedDefinitions.moveEntry(true, r, 51, List.of("n3"), false));

        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        a.writeSnapshot(snapshot);
        ReplicatedDefinitions b = new ReplicatedDefinitions();
        b.installSnapshot(new ByteArrayInputStream(snapshot.toByteArray()));
        assertThat(b.memberSet(q)).isEqualTo(List.of("n1", "n2", "n3"));
        assertThat(b.pendingMove(r)).isEqualTo(new ReplicatedDefinitions.Move(51, List.of("n3")));
        b.apply(10, ReplicatedDefinitions.moveEntry(false, r, 51, List.of(), true));
        assertThat(b.memberSet(r)).isEqualTo(List.of("n3"));

        apply(b, 11, new InVhost("v", new io.skiffmq.core.definitions.DefinitionChange.QueueDeleted("q")));
        assertThat(b.memberSet(q)).isNull();
    }
}
