package io.skiffmq.server.amqp10;

import io.skiffmq.core.metrics.ConnectionCounters;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A session's link handles [2.6.2] and the state of each. A handle stays taken from the peer's attach until the
 * detach exchange completes: a link we detached (or refused) keeps its handle in {@link LinkState#DETACH_SENT}
 * until the peer's reply detach, and frames for it meanwhile are ignored by the session. Attached sending and
 * receiving links are the connection's consumers and publishers in its counters (RabbitMQ's global
 * {@code consumers} and {@code publishers}), from the attach until the first detach. Owned by the connection's
 * event loop.
 */
final class LinkRegistry {
    /** One handle: its link (null for a refused attach), the link's name, and where the detach exchange stands. */
    static final class Slot {
        final Link link;
        final String name;
        private LinkState state = LinkState.ATTACHED;

        private Slot(Link link, String name) {
            this.link = link;
            this.name = name;
        }

        LinkState state() {
            return state;
        }

        boolean attached() {
            return state == LinkState.ATTACHED;
        }
    }

    private final Map<Long, Slot> slots = new HashMap<>();
    private final ConnectionCounters counters;

    LinkRegistry(ConnectionCounters counters) {
        this.counters = counters;
    }

    /** The slot of {@code handle}, or null when the handle is free. */
    Slot get(long handle) {
        return slots.get(handle);
    }

    boolean inUse(long handle) {
        return slots.containsKey(handle);
    }

    void attached(long handle, String name, Link link) {
        slots.put(handle, new Slot(link, name));
        count(link, 1);
    }

    /** A publisher ({@link IncomingLink}) or consumer ({@link OutgoingLink}) began or ended; other links are not. */
    private void count(Link link, int n) {
        if (link instanceof IncomingLink) {
            counters.publishers(n);
        } else if (link instanceof OutgoingLink) {
            counters.consumers(n);
        }
    }

    /** An attach we refused: answered with attach and detach at once, so the handle waits for the peer's detach. */
    void refused(long handle, String name) {
        Slot slot = new Slot(null, name);
        slot.state = slot.state.to(LinkState.DETACH_SENT);
        slots.put(handle, slot);
    }

    /** We detached {@code handle}'s link; returns its slot, or null if the handle was free. */
    Slot detachSent(long handle) {
        Slot slot = slots.get(handle);
        if (slot != null) {
            if (slot.attached()) {
                count(slot.link, -1);
            }
            slot.state = slot.state.to(LinkState.DETACH_SENT);
        }
        return slot;
    }

    /** The peer's detach completes the exchange: the handle is free. Returns the slot it had, or null. */
    Slot detached(long handle) {
        Slot slot = slots.remove(handle);
        if (slot != null) {
            if (slot.attached()) {
                count(slot.link, -1);
            }
            slot.state = slot.state.to(LinkState.DETACHED);
        }
        return slot;
    }

    /** The attached link named {@code name} of type {@code type}, or null. */
    <T extends Link> T attachedNamed(String name, Class<T> type) {
        for (Slot slot : slots.values()) {
            if (slot.attached() && type.isInstance(slot.link) && name.equals(slot.name)) {
                return type.cast(slot.link);
            }
        }
        return null;
    }

    /** Calls {@code action} on every attached link. */
    void forEachAttached(Consumer<Link> action) {
        for (Slot slot : slots.values()) {
            if (slot.attached() && slot.link != null) {
                action.accept(slot.link);
            }
        }
    }

    /** Calls {@code action} on every link ever attached here, then forgets every handle (the session ends). */
    void clear(Consumer<Link> action) {
        for (Slot slot : slots.values()) {
            if (slot.attached()) {
                count(slot.link, -1);
            }
            if (slot.link != null) {
                action.accept(slot.link);
            }
        }
        slots.clear();
    }
}
