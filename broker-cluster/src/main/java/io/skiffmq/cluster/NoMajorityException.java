package io.skiffmq.cluster;

/**
 * A metadata change that could not be committed in time: no majority of the cluster's nodes could be reached, or
 * no leader was elected (RabbitMQ's {@code timeout} from Khepri, which its protocols turn into their own errors).
 * For a queue group's command, also one whose leader was deposed before it committed it ({@link #deposed}).
 */
public final class NoMajorityException extends RuntimeException {
    private final boolean deposed;

    public NoMajorityException(String message, Throwable cause) {
        this(message, cause, false);
    }

    /** @param deposed the leader appending it lost its leadership (or its epoch ended) first */
    public NoMajorityException(String message, Throwable cause, boolean deposed) {
        super(message, cause);
        this.deposed = deposed;
    }

    /**
     * The leader that appended it no longer leads: whether it is committed is the next leader's to say (a later
     * leader's log may have it), so it may be sent there again under the number it had; false when it timed out
     * without a majority.
     */
    public boolean deposed() {
        return deposed;
    }
}
