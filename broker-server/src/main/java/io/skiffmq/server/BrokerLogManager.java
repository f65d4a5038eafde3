package io.skiffmq.server;

import java.util.logging.LogManager;

/**
 * The JDK's log manager resets (closes every handler) from a shutdown hook of its own, which races the broker's
 * shutdown hook and loses what a stopping broker logs: closing connections, the journal's last batch. This one
 * ignores that reset; the broker's hook calls {@link #resetAtLast} when it is done. Installed by {@link SkiffMq}
 * through {@code java.util.logging.manager} before anything logs.
 */
public final class BrokerLogManager extends LogManager {
    private volatile boolean stopping;

    @Override
    public void reset() {
        if (stopping) {
            super.reset();
        }
    }

    /** Resets for real: the last thing a stopping broker does. */
    static void resetAtLast() {
        if (LogManager.getLogManager() instanceof BrokerLogManager manager) {
            manager.stopping = true;
            manager.reset();
        }
    }
}
