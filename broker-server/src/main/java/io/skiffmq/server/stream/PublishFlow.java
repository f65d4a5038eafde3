package io.skiffmq.server.stream;

import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.server.connection.ReadSuspension;
import java.util.function.IntSupplier;

/**
 * A stream connection's publish flow control, RabbitMQ's connection credits: the connection is no longer read once
 * {@code stream-initial-credits} messages are unconfirmed, or while the disk alarm is up and it has publishers, and
 * is read again once the unconfirmed are back under the initial credits less
 * {@code stream-credits-required-for-unblocking} (at least one below; the settings are not checked against each
 * other, so they may be set in any order) and no alarm holds (a connection without publishers always is).
 * The check runs after each frame, so the frame that found the alarm up is taken whole (RabbitMQ's reader takes the
 * packet it had asked for, then asks for no more).
 *
 * <p>Only the disk alarm counts, as RabbitMQ's stream reader registers for it alone ({@code resource_alarm/3}
 * ignores memory): a stream's messages go to its log, and the credits bound what a connection holds in memory.
 * Owned by the connection's event loop.
 */
final class PublishFlow {
    private final ReadSuspension<?> reading;
    private final StreamSettings settings;
    private final ResourceAlarms alarms;
    private final IntSupplier publishers;
    /** Messages published and neither confirmed nor refused. */
    private long unconfirmed;

    /** @param publishers the connection's count of publishers */
    PublishFlow(ReadSuspension<?> reading, StreamSettings settings, ResourceAlarms alarms, IntSupplier publishers) {
        this.reading = reading;
        this.settings = settings;
        this.alarms = alarms;
        this.publishers = publishers;
    }

    /** True while the disk alarm is up: declaring publishers is refused then (0x11). */
    boolean alarmed() {
        return alarms.active().contains(Resource.DISK);
    }

    /** {@code n} messages were published: they count until confirmed or refused. */
    void sent(int n) {
        unconfirmed += n;
    }

    /** {@code n} published messages were confirmed, refused or dropped. */
    void answered(int n) {
        unconfirmed = Math.max(0, unconfirmed - n);
        unblockIfPossible();
    }

    /** After a frame of an open connection: blocked when over its credits, or by the alarm when it publishes. */
    void blockIfNeeded() {
        if (!reading.blocked() && (unconfirmed >= settings.initialCredits()
                || publishers.getAsInt() > 0 && alarmed())) {
            reading.block();
        }
    }

    /** Reading goes on if nothing holds it any more (an alarm cleared, confirms came, publishers went). */
    void unblockIfPossible() {
        if (reading.blocked() && (publishers.getAsInt() == 0 || !alarmed() && unconfirmed
                < Math.max(1, settings.initialCredits() - settings.creditsRequiredForUnblocking()))) {
            reading.unblock();
        }
    }
}
