package io.skiffmq.core.alarm;

/**
 * One alarm's state machine on one reading, with hysteresis: it rises when the reading passes the raise level and
 * clears only once the reading is back beyond the clear level, so a reading hovering at the limit does not make
 * the alarm (and every publisher with it) flap. Memory rises <em>above</em> its level, free disk space
 * <em>below</em> its own; {@link #above} and {@link #below} say which.
 *
 * <p>States: clear → raised (reading past the raise level) → clear (reading back past the clear level); nothing
 * else changes the state. Owned by {@link ResourceMonitor}'s thread (checks run under its lock); not thread-safe.
 */
final class Hysteresis {
    enum Transition { NONE, RAISED, CLEARED }

    /** +1 for an alarm on a high reading, -1 for one on a low reading: comparisons are made on sign × value. */
    private final int sign;
    private final long raiseLevel;
    private final long clearLevel;
    private boolean raised;

    private Hysteresis(int sign, long raiseLevel, long clearLevel) {
        this.sign = sign;
        this.raiseLevel = raiseLevel;
        this.clearLevel = clearLevel;
    }

    /** Rises when the reading is above {@code raiseAbove}; clears when it is below {@code clearBelow} (≤ raise). */
    static Hysteresis above(long raiseAbove, long clearBelow) {
        if (clearBelow > raiseAbove) {
            throw new IllegalArgumentException("clear level " + clearBelow + " above raise level " + raiseAbove);
        }
        return new Hysteresis(1, raiseAbove, clearBelow);
    }

    /** Rises when the reading is below {@code raiseBelow}; clears when it is above {@code clearAbove} (≥ raise). */
    static Hysteresis below(long raiseBelow, long clearAbove) {
        if (clearAbove < raiseBelow) {
            throw new IllegalArgumentException("clear level " + clearAbove + " below raise level " + raiseBelow);
        }
        return new Hysteresis(-1, raiseBelow, clearAbove);
    }

    /** Takes a reading; says whether the alarm rose or cleared with it. */
    Transition check(long reading) {
        if (!raised && Long.compare(reading, raiseLevel) * sign > 0) {
            raised = true;
            return Transition.RAISED;
        }
        if (raised && Long.compare(reading, clearLevel) * sign < 0) {
            raised = false;
            return Transition.CLEARED;
        }
        return Transition.NONE;
    }

    /** The same alarm, in the same state, with new levels: the next check decides by them. */
    Hysteresis withLevels(long raise, long clear) {
        Hysteresis next = sign > 0 ? above(raise, clear) : below(raise, clear);
        next.raised = raised;
        return next;
    }

    boolean raised() {
        return raised;
    }

    long raiseLevel() {
        return raiseLevel;
    }

    long clearLevel() {
        return clearLevel;
    }
}
