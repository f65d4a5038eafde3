package io.skiffmq.cluster;

/**
 * A metadata change that could not be committed in time: no majority of the cluster's nodes could be reached, or
 * no leader was elected (RabbitMQ's {@code timeout} from Khepri, which its protocols turn into their own errors).
 */
public final class NoMajorityException extends RuntimeException {
    public NoMajorityException(String message, Throwable cause) {
        super(message, cause);
    }
}
