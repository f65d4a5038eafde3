package io.skiffmq.core.alarm;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The broker's resource alarms: which are up, and who is told when that changes. While any is up, publishers are
 * held back (AMQP 1.0: session incoming-window 0; AMQP 0-9-1: {@code connection.blocked}, the socket no longer
 * read); consumers, attaches and new connections go on. The alarms are raised and cleared by
 * {@link ResourceMonitor} (or by a test).
 *
 * <p>Thread-safe. {@link #raise} and {@link #clear} may be called from any thread (the monitor's, in practice);
 * they change the state under {@code this} and then call the listeners on the calling thread, outside the lock.
 * {@link #active()} is one volatile read. Listeners must not block (the broker's listener only hands a task to
 * each connection's event loop). Changes made on two threads may reach a listener in either order, so a listener
 * treats a call as "something changed" and reads {@link #active()} where it applies the change, rather than
 * trusting the order of the calls.
 */
public final class ResourceAlarms {

    /** What an alarm is about; {@link #text} as RabbitMQ names it in its logs and in {@code connection.blocked}. */
    public enum Resource {
        MEMORY("memory"), DISK("disk");

        private final String text;

        Resource(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    private final Object lock = new Object();
    /** An unmodifiable snapshot, replaced on every change; written under {@link #lock}. */
    private volatile Set<Resource> active = Collections.unmodifiableSet(EnumSet.noneOf(Resource.class));
    private final CopyOnWriteArrayList<Consumer<Set<Resource>>> listeners = new CopyOnWriteArrayList<>();

    /** Raises the alarm for {@code resource}; true when it was not up. Listeners are called when it changed. */
    public boolean raise(Resource resource) {
        return change(resource, true);
    }

    /** Clears the alarm for {@code resource}; true when it was up. Listeners are called when it changed. */
    public boolean clear(Resource resource) {
        return change(resource, false);
    }

    private boolean change(Resource resource, boolean up) {
        Set<Resource> now;
        synchronized (lock) {
            Set<Resource> before = active;
            if (before.contains(resource) == up) {
                return false;
            }
            EnumSet<Resource> next = before.isEmpty() ? EnumSet.noneOf(Resource.class) : EnumSet.copyOf(before);
            if (up) {
                next.add(resource);
            } else {
                next.remove(resource);
            }
            now = Collections.unmodifiableSet(next);
            active = now;
        }
        for (Consumer<Set<Resource>> listener : listeners) {
            listener.accept(now);
        }
        return true;
    }

    /** The alarms up now: an unmodifiable snapshot. */
    public Set<Resource> active() {
        return active;
    }

    /** True while any alarm is up: publishers are held back. */
    public boolean any() {
        return !active.isEmpty();
    }

    /**
     * Calls {@code listener} with the alarms up after each change, on the thread that made it (see the class
     * comment for what the order of calls means).
     *
     * @return what unsubscribes the listener
     */
    public Runnable onChange(Consumer<Set<Resource>> listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** RabbitMQ's words for the alarms up, as in {@code connection.blocked}: "low on memory & disk". */
    public static String blockedReason(Set<Resource> resources) {
        StringBuilder reason = new StringBuilder("low on ");
        String separator = "";
        for (Resource resource : resources) {
            reason.append(separator).append(resource.text());
            separator = " & ";
        }
        return reason.toString();
    }
}
