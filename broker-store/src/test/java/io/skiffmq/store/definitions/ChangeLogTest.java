package io.skiffmq.store.definitions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.BindingRemoved;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeleted;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeleted;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snapshot and change log: replay, a torn tail, compaction, an interrupted compaction, migration. */
class ChangeLogTest {
    private static final ChangeLog.Compaction NEVER = new ChangeLog.Compaction(1000, Long.MAX_VALUE);

    @TempDir
    Path dir;

    private ChangeLog open(VhostReplica replica, ChangeLog.Compaction compaction) {
        ChangeLog log = ChangeLog.open(dir, "definitions", replica, compaction, () -> null);
        log.start();
        return log;
    }

    /** What the replica holds, as its snapshot lists it. */
    private static List<DefinitionChange> state(ChangeLog.Replica replica) {
        List<DefinitionChange> state = new ArrayList<>();
        replica.snapshot(state::add);
        return state;
    }

    private static Binding binding(String queue) {
        return new Binding("amq.direct", Destination.queue(queue), queue, Map.of());
    }

    @Test
    void changesComeBackFromTheLogWithTheirCascades() {
        VhostReplica expected = new VhostReplica();
        try (ChangeLog log = open(new VhostReplica(), NEVER)) {
            List<DefinitionChange> changes = List.of(
                new ExchangeDeclared(new Exchange("x", Exchange.Type.TOPIC, true, false, false, Map.of("k", 1L))),
                new QueueDeclared("a", 1, false, Map.of("x-max-length", 5L)),
                new QueueDeclared("b", 2, true, Map.of()),
                new BindingAdded(binding("a")), new BindingAdded(binding("b")),
                new BindingAdded(new Binding("x", Destination.queue("a"), "#", Map.of())),
                new BindingAdded(new Binding("amq.fanout", Destination.exchange("x"), "", Map.of())),
                new QueueDeleted("b"), new BindingRemoved(binding("a")), new ExchangeDeleted("x"));
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (DefinitionChange change : changes) {
                done.add(log.append(change));
                expected.apply(change);
            }
            done.forEach(CompletableFuture::join);
        }
        VhostReplica recovered = new VhostReplica();
        open(recovered, NEVER).close();
        assertThat(state(recovered)).isEqualTo(state(expected));
        assertThat(recovered.queues()).extracting(QueueDeclared::name).containsExactly("a");
        assertThat(recovered.bindings()).as("b's binding went with it, x's from and to it with x").isEmpty();
        assertThat(recovered.nextQueueId()).isEqualTo(3);
    }

    @Test
    void aConfirmedChangeIsInTheFileWhenItsFutureCompletes() throws Exception {
        try (ChangeLog log = open(new VhostReplica(), NEVER)) {
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                done.add(log.append(new QueueDeclared("q" + i, i + 1, false, Map.of())));
            }
            done.get(499).join();
            ChangeFile.Contents contents = ChangeFile.read(dir.resolve("definitions.log"), ChangeFile.LOG);
            assertThat(contents.changes()).hasSize(500);
            assertThat(done).allMatch(CompletableFuture::isDone);
        }
    }

    @Test
    void aTornLastRecordIsDroppedAndCutOff() throws Exception {
        try (ChangeLog log = open(new VhostReplica(), NEVER)) {
            log.append(new QueueDeclared("kept", 1, false, Map.of())).join();
        }
        Path file = dir.resolve("definitions.log");
        long whole = Files.size(file);
        byte[] record = ChangeFile.records(List.of(new QueueDeclared("torn", 2, false, Map.of()))).array();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.APPEND)) {
            channel.write(ByteBuffer.wrap(record, 0, record.length - 3)); // the crash came mid-write
        }
        VhostReplica recovered = new VhostReplica();
        try (ChangeLog log = open(recovered, NEVER)) {
            assertThat(recovered.queues()).extracting(QueueDeclared::name).containsExactly("kept");
            assertThat(Files.size(file)).isEqualTo(whole);
            log.append(new QueueDeclared("after", 3, false, Map.of())).join();
        }
        // a whole record whose bytes are not what was written (its CRC says so) is torn too
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.APPEND)) {
            record[record.length - 1] ^= 1;
            channel.write(ByteBuffer.wrap(record));
        }
        VhostReplica again = new VhostReplica();
        open(again, NEVER).close();
        assertThat(again.queues()).extracting(QueueDeclared::name).containsExactly("kept", "after");
    }

    @Test
    void theLogIsCompactedIntoASnapshotOnceItOutgrowsItAndRecoversTheSame() throws Exception {
        VhostReplica expected = new VhostReplica();
        ChangeLog.Compaction compaction = new ChangeLog.Compaction(2, 4096);
        try (ChangeLog log = open(new VhostReplica(), compaction)) {
            CompletableFuture<Void> last = null;
            for (int i = 0; i < 3000; i++) {
                // a churn of short-lived queues around a few that stay
                List<DefinitionChange> changes = i % 100 == 0
                    ? List.of(new QueueDeclared("stays" + i, i + 1, false, Map.of()), new BindingAdded(binding("stays" + i)))
                    : List.of(new QueueDeclared("q" + i, i + 1, false, Map.of()), new BindingAdded(binding("q" + i)),
                        new QueueDeleted("q" + i));
                changes.forEach(expected::apply);
                last = log.append(changes);
            }
            last.join();
            // a batch is compacted after its appends complete: the last may still be at it
            await().atMost(Duration.ofSeconds(30)).until(() -> log.compactions() > 0);
        }
        assertThat(Files.size(dir.resolve("definitions.log")))
            .as("the log stays within the ratio of the snapshot, or the minimum")
            .isLessThanOrEqualTo(Math.max(4096, 2 * Files.size(dir.resolve("definitions.snapshot"))) + 200);
        VhostReplica recovered = new VhostReplica();
        open(recovered, compaction).close();
        assertThat(state(recovered)).isEqualTo(state(expected));
        assertThat(recovered.queues()).hasSize(30);
        assertThat(recovered.nextQueueId()).as("ids of deleted queues are not given again").isEqualTo(3001);
    }

    @Test
    void aLogOlderThanItsSnapshotIsACompactionACrashInterruptedAndIsNotReplayed() throws Exception {
        try (ChangeLog log = open(new VhostReplica(), NEVER)) {
            log.append(new QueueDeclared("q", 1, false, Map.of())).join();
            log.append(new QueueDeleted("q")).join();
        }
        // the crash came after the new snapshot (generation 1) was renamed in, before the log was replaced
        ChangeFile.replace(dir.resolve("definitions.snapshot"), ChangeFile.SNAPSHOT, 1,
            List.of(new QueueDeclared("q", 1, false, Map.of()), new QueueDeclared("r", 2, false, Map.of())));
        VhostReplica recovered = new VhostReplica();
        try (ChangeLog log = open(recovered, NEVER)) {
            assertThat(recovered.queues()).extracting(QueueDeclared::name).containsExactly("q", "r");
            log.append(new QueueDeleted("r")).join();
        }
        VhostReplica again = new VhostReplica();
        open(again, NEVER).close();
        assertThat(again.queues()).extracting(QueueDeclared::name).containsExactly("q");
    }

    @Test
    void aDamagedSnapshotStopsTheStart() throws Exception {
        ChangeFile.replace(dir.resolve("definitions.snapshot"), ChangeFile.SNAPSHOT, 1,
            List.of(new QueueDeclared("q", 1, false, Map.of())));
        Path snapshot = dir.resolve("definitions.snapshot");
        byte[] bytes = Files.readAllBytes(snapshot);
        bytes[bytes.length - 1] ^= 1;
        Files.write(snapshot, bytes);
        assertThatThrownBy(() -> ChangeLog.open(dir, "definitions", new VhostReplica(), NEVER, () -> null))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("is damaged");
    }

    @Test
    void theBrokersOldDefinitionsFileIsMigratedWithNothingLost() throws Exception {
        BrokerDefinitions old = new BrokerDefinitions(
            List.of(new VhostDefinition("/", -1, -1), new VhostDefinition("limited", 3, 7)),
            List.of(new UserDefinition("guest", "h1", "rabbit_password_hashing_sha256", List.of("administrator"), -1, -1),
                new UserDefinition("carol", "h2", "rabbit_password_hashing_sha512", List.of(), 2, 5)),
            List.of(new PermissionDefinition("guest", "/", ".*", ".*", ".*"),
                new PermissionDefinition("carol", "limited", "^carol-", "", ".*")),
            List.of(new BrokerDefinitions.TopicPermissionDefinition("carol", "limited", "amq.topic", "^a", "^b")));
        OldDefinitionsFormat.writeBroker(dir.resolve("definitions.amqp"), old);
        try (BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir, NEVER, () -> {
            throw new AssertionError("not a first start");
        })) {
            assertThat(store.firstStart()).isFalse();
            assertThat(store.recovered()).isEqualTo(old);
            store.append(List.of(new DefinitionChange.UserDeleted("carol"))).join();
        }
        assertThat(dir.resolve("definitions.amqp")).doesNotExist();
        try (BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir, NEVER, () -> null)) {
            assertThat(store.recovered()).isEqualTo(old.apply(new DefinitionChange.UserDeleted("carol")));
        }
    }

    @Test
    void aFirstStartWritesItsDefinitionsAsTheFirstSnapshot() {
        BrokerDefinitions first = new BrokerDefinitions(List.of(new VhostDefinition("/", -1, -1)), List.of(),
            List.of(), List.of());
        try (BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir, NEVER, () -> first)) {
            assertThat(store.firstStart()).isTrue();
        }
        assertThat(dir.resolve("definitions.snapshot")).exists();
        try (BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir, NEVER, () -> null)) {
            assertThat(store.firstStart()).isFalse();
            assertThat(store.recovered()).isEqualTo(first);
        }
    }
}
