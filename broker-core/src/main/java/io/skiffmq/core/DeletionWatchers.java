package io.skiffmq.core;

import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What watches a virtual host's queues and exchanges for their deletion (publisher links that target them), and
 * the deletions still to announce: exchanges auto-deleted by a change under the virtual host's lock are announced
 * once it is released, so no watcher runs under it.
 *
 * <p>Thread-safe: the watchers are concurrent sets; the deletions to announce are guarded by {@code this}.
 */
final class DeletionWatchers {
    private final Map<Destination, Set<Runnable>> watchers = new ConcurrentHashMap<>();
    private final List<Destination> toAnnounce = new ArrayList<>();

    /** Runs {@code action} once when {@code destination} is deleted; returns what cancels the watch. */
    Runnable watch(Destination destination, Runnable action) {
        watchers.computeIfAbsent(destination, d -> ConcurrentHashMap.newKeySet()).add(action);
        return () -> {
            Set<Runnable> watching = watchers.get(destination);
            if (watching != null) {
                watching.remove(action);
            }
        };
    }

    /** {@code destination} was deleted: its watchers run now, on this thread. */
    void deleted(Destination destination) {
        Set<Runnable> watching = watchers.remove(destination);
        if (watching != null) {
            watching.forEach(Runnable::run);
        }
    }

    /** {@code destination} was deleted under a lock: its watchers run at the next {@link #announce}. */
    synchronized void deletedUnderLock(Destination destination) {
        toAnnounce.add(destination);
    }

    /** Runs the watchers of what was deleted under a lock. Called with no lock held. */
    void announce() {
        List<Destination> gone;
        synchronized (this) {
            if (toAnnounce.isEmpty()) {
                return;
            }
            gone = List.copyOf(toAnnounce);
            toAnnounce.clear();
        }
        gone.forEach(this::deleted);
    }
}
