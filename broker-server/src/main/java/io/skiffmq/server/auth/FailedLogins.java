package io.skiffmq.server.auth;

import java.net.InetAddress;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The failed-login rate limit: a token bucket per source address, {@code burst} deep, refilled at {@code rate} per
 * second. A failed login takes a token; while an address has none, its logins are refused before any password is
 * checked. A login that succeeds takes nothing, so a burst of good logins (a reconnect storm) is never limited,
 * and concurrent bad ones overshoot by at most the logins already being checked. Buckets that have filled up again
 * are forgotten once many addresses are tracked. Thread-safe: the connections' loops ask, the authentication
 * threads record failures; each bucket is updated under its own lock.
 */
final class FailedLogins {
    /** Addresses tracked before full buckets are swept out. */
    static final int SWEEP_ABOVE = 10_000;

    private final double ratePerNano;
    private final int burst;
    private final LongSupplier nanoClock;
    private final Map<InetAddress, Bucket> buckets = new ConcurrentHashMap<>();

    /** @param burst 0 switches the limit off */
    FailedLogins(double ratePerSecond, int burst, LongSupplier nanoClock) {
        this.ratePerNano = ratePerSecond / 1e9;
        this.burst = burst;
        this.nanoClock = nanoClock;
    }

    /** True when {@code address} may try to log in now (it has a failure to spend). */
    boolean allowed(InetAddress address) {
        if (burst == 0) {
            return true;
        }
        Bucket bucket = buckets.get(address);
        return bucket == null || bucket.tokens(nanoClock.getAsLong()) >= 1;
    }

    /** A login from {@code address} failed: it spends a token. */
    void failed(InetAddress address) {
        if (burst == 0) {
            return;
        }
        if (buckets.size() > SWEEP_ABOVE) {
            sweep();
        }
        buckets.computeIfAbsent(address, a -> new Bucket(burst, nanoClock.getAsLong())).take(nanoClock.getAsLong());
    }

    private void sweep() {
        long now = nanoClock.getAsLong();
        for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
            if (it.next().tokens(now) >= burst) {
                it.remove();
            }
        }
    }

    private final class Bucket {
        private double tokens;
        private long refilledAt;

        Bucket(double tokens, long now) {
            this.tokens = tokens;
            this.refilledAt = now;
        }

        synchronized double tokens(long now) {
            tokens = Math.min(burst, tokens + (now - refilledAt) * ratePerNano);
            refilledAt = now;
            return tokens;
        }

        synchronized void take(long now) {
            tokens(now);
            tokens = Math.max(0, tokens - 1);
        }
    }
}
