package io.skiffmq.cluster;

/**
 * The time this node's appends to one group take to be committed, as a moving average (each new one weighs a
 * fifth): what RabbitMQ's {@code raft_entry_commit_latency_seconds} shows of a Ra server. Appends complete on Ratis'
 * threads: {@link #add} is synchronized; {@link #seconds} reads a volatile.
 */
final class CommitLatency {
    private static final double WEIGHT = 0.2;
    private volatile double seconds;

    synchronized void add(long nanos) {
        double latest = nanos / 1e9;
        seconds = seconds == 0 ? latest : seconds + WEIGHT * (latest - seconds);
    }

    double seconds() {
        return seconds;
    }
}
