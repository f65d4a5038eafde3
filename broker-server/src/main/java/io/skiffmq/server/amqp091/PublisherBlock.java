package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.util.Set;

/**
 * RabbitMQ's publisher blocking for one connection (its reader's throttle): while a resource alarm is up, a
 * connection is blocked once it publishes, that is when a content frame arrives (the one that did is still
 * processed). Blocked, its socket is no longer read ({@link ReadSuspension#block}) and, if the client's
 * capabilities say {@code connection.blocked}, it is told {@code connection.blocked} with RabbitMQ's reason
 * ("low on memory", "low on disk", "low on memory &amp; disk"). A connection that only consumes is read as before.
 * When every alarm has cleared it is told {@code connection.unblocked} (if it was told blocked) and reading goes on.
 *
 * <p>States: running → blocked (a content frame while an alarm is up) → running (every alarm cleared). A change of
 * alarms while blocked changes nothing on the wire, as in RabbitMQ. Owned by the connection's event loop.
 */
final class PublisherBlock {
    private final ReadSuspension reading;
    private final FrameOutput output;
    private Set<Resource> alarms = Set.of();
    private boolean blocked;
    private boolean blockedSent;

    PublisherBlock(ReadSuspension reading, FrameOutput output) {
        this.reading = reading;
        this.output = output;
    }

    /** The alarms up now; once none is, a blocked connection is let go. */
    void alarms(Set<Resource> active) {
        alarms = active;
        if (blocked && active.isEmpty()) {
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
        if (blocked || alarms.isEmpty()) {
            return;
        }
        blocked = true;
        reading.block();
        if (notify) {
            blockedSent = true;
            output.method(0, new ConnectionMethod.Blocked(ResourceAlarms.blockedReason(alarms)));
        }
    }

    /** True while blocked: the socket is not read, so the peer's heartbeats cannot be either. */
    boolean blocked() {
        return blocked;
    }
}
