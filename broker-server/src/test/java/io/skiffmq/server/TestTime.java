package io.skiffmq.server;

import io.skiffmq.core.time.BrokerClock;
import io.skiffmq.core.time.ManualClock;

/**
 * The time a TTL or expiry test moves on. Against SkiffMQ it is a {@link ManualClock} the broker runs on, which
 * {@link #advance} moves by hand; the queue then does what came due on its own thread, so a test awaits the
 * observable result. Against an external RabbitMQ it is the wall clock, which moves by itself: {@link #advance}
 * does nothing, the TTLs are kept small (a few hundred milliseconds) and the same awaits see them pass. Checks of
 * what must not have happened yet at an exact moment hold only on the manual clock ({@link #isManual()}).
 */
final class TestTime {
    /** Where the manual clock starts: a whole second, so 0-9-1 timestamps (seconds) compare exactly. */
    static final long START = 1_700_000_000_000L;

    private final ManualClock clock;

    private TestTime(ManualClock clock) {
        this.clock = clock;
    }

    /** A manual clock for a SkiffMQ broker to run on. */
    static TestTime onManualClock() {
        return new TestTime(new ManualClock(START));
    }

    /** The clock to start a SkiffMQ broker with. */
    BrokerClock clock() {
        return clock;
    }

    /** Time passes on the wall clock instead: the broker is external. */
    static TestTime onWallClock() {
        return new TestTime(null);
    }

    boolean isManual() {
        return clock != null;
    }

    /** Moves the manual clock on; the wall clock moves by itself. */
    void advance(long millis) {
        if (clock != null) {
            clock.advance(millis);
        }
    }

    /** Milliseconds since the epoch, as the broker sees them. */
    long millis() {
        return clock != null ? clock.millis() : System.currentTimeMillis();
    }
}
