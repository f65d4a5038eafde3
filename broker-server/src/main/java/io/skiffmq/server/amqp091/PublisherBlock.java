package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.server.connection.ReadSuspension;
import java.util.Set;
import java.util.function.Supplier;

/**
 * RabbitMQ's publisher blocking for one connection (its reader's throttle): while a resource alarm is up, a
 * connection is blocked once it publishes: when the last content frame of a message arrives (that message is
 * still taken whole; RabbitMQ blocks after any content frame, which leaves the rest of the message unread). Blocked, its socket is no longer read ({@link ReadSuspension#block}) and, if the client's
 * capabilities say {@code connection.blocked}, it is told {@code connection.blocked} with RabbitMQ's reason
 * ("low on memory", "low on disk", "low on memory &amp; disk"). A connection that only consumes is read as before.
 * When every alarm has cleared it is told {@code connection.unblocked} (if it was told blocked) and reading goes on.
 *
 * <p>States: running → blocked (a content frame while an alarm is up) → running (every alarm cleared). A change of
 * alarms while blocked changes nothing on the wire, as in RabbitMQ. Whether an alarm is up is read from the broker
 * at each publish (one volatile read), not from the last change the event loop has seen: frames read in the same
 * batch as the alarm rose must not slip through. A change is applied by {@link #alarmsChanged}, which the connection
 * runs on its event loop after every change, so an alarm that clears just after a publish blocked the connection
 * still lets it go. Owned by the connection's event loop.
 */
final class PublisherBlock {
    private final ReadSuspension<?> reading;
    private final FrameOutput output;
    private final Supplier<Set<Resource>> alarms;
    private boolean blocked;
    private boolean blockedSent;

    /** @param alarms the alarms up now (the broker's {@link ResourceAlarms#active}) */
    PublisherBlock(ReadSuspension<?> reading, FrameOutput output, Supplier<Set<Resource>> alarms) {
        this.reading = reading;
        this.output = output;
        this.alarms = alarms;
    }

    /** The alarms changed: once none is up, a blocked connection is let go. */
    void alarmsChanged() {
        if (blocked && alarms.get().isEmpty()) {
            blocked = false;
            if (blockedSent) {
                blockedSent = false;
                output.method(0, ConnectionMethod.Unblocked.INSTANCE);
            }
            reading.unblock();
        }
    }

    /**
     * A content frame (a publish) was processed: blocks the connection if an alarm is up.
     *
     * @param notify the client asked for {@code connection.blocked} in its capabilities
     */
    void published(boolean notify) {
        if (blocked) {
            return;
        }
        Set<Resource> active = alarms.get();
        if (active.isEmpty()) {
            return;
        }
        blocked = true;
        reading.block();
        if (notify) {
            blockedSent = true;
            output.method(0, new ConnectionMethod.Blocked(ResourceAlarms.blockedReason(active)));
        }
    }

    /** True while blocked: the socket is not read, so the peer's heartbeats cannot be either. */
    boolean blocked() {
        return blocked;
    }
}
