package io.skiffmq.store.definitions;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The broker's own definitions on disk (virtual hosts, users, permissions, topic permissions, limits):
 * {@code data-dir/definitions.snapshot} and {@code data-dir/definitions.log}, a {@link ChangeLog} of
 * {@link BrokerChange}s. An older broker's {@code data-dir/definitions.amqp} is migrated on the first start.
 *
 * <p>Thread-safe: {@link #append} from any thread (the administration's, serialised there, so in the order the
 * definitions in force change).
 */
public final class BrokerDefinitionsStore implements AutoCloseable {
    static final String NAME = "definitions";

    private final ChangeLog log;
    private final BrokerDefinitions recovered;
    private final boolean firstStart;

    private BrokerDefinitionsStore(ChangeLog log, BrokerDefinitions recovered, boolean firstStart) {
        this.log = log;
        this.recovered = recovered;
        this.firstStart = firstStart;
    }

    /**
     * Recovers the broker's definitions from {@code dataDir}: the change log, else an older broker's file, else
     * {@code firstStart}'s, written as the first snapshot.
     */
    public static BrokerDefinitionsStore open(Path dataDir, ChangeLog.Compaction compaction,
            Supplier<BrokerDefinitions> firstStart) {
        Path legacy = dataDir.resolve(LegacyDefinitions.FILE);
        boolean[] first = new boolean[1];
        BrokerReplica replica = new BrokerReplica();
        ChangeLog log = ChangeLog.open(dataDir, NAME, replica, compaction, () -> {
            BrokerDefinitions old = LegacyDefinitions.broker(legacy);
            if (old == null) {
                first[0] = true;
                old = firstStart.get();
            }
            return old.changes();
        });
        LegacyDefinitions.delete(legacy);
        BrokerDefinitions definitions = replica.definitions();
        log.start();
        return new BrokerDefinitionsStore(log, definitions, first[0]);
    }

    /** True when {@code dataDir} holds a single node's definitions (in this form or an older broker's file). */
    public static boolean exists(Path dataDir) {
        return ChangeLog.exists(dataDir, NAME) || java.nio.file.Files.exists(dataDir.resolve(LegacyDefinitions.FILE));
    }

    /**
     * Moves a single node's definitions files into {@code dataDir/definitions-migrated/}, once a cluster's log
     * holds them: kept for the operator, no longer read.
     */
    public static void retire(Path dataDir) throws java.io.IOException {
        Path into = java.nio.file.Files.createDirectories(dataDir.resolve(NAME + "-migrated"));
        for (String file : List.of(NAME + ".snapshot", NAME + ".log", LegacyDefinitions.FILE)) {
            Path from = dataDir.resolve(file);
            if (java.nio.file.Files.exists(from)) {
                java.nio.file.Files.move(from, into.resolve(file), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** The definitions as recovered (or made for the first start). */
    public BrokerDefinitions recovered() {
        return recovered;
    }

    /** True when this data directory had no definitions: they are {@code firstStart}'s. */
    public boolean firstStart() {
        return firstStart;
    }

    /** Appends changes; completes once they are durable. */
    public CompletableFuture<Void> append(List<? extends BrokerChange> changes) {
        return log.append(changes);
    }

    @Override
    public void close() {
        log.close();
    }
}
