package io.skiffmq.core.queue;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.policy.EffectivePolicy;
import java.util.List;
import java.util.Map;

/**
 * A stream's {@code x-} arguments and properties, checked as RabbitMQ 4 checks them: the values as
 * {@code rabbit_amqqueue:declare_args/0} checks the stream's arguments (in its order, so of several bad values
 * RabbitMQ's first is named), the arguments only other queue types take ({@code … of queue type
 * rabbit_stream_queue}), then what {@code rabbit_stream_queue:declare/2} refuses: auto-delete, exclusive and
 * non-durable streams, a segment size past 3,000,000,000 bytes and a filter size outside 16..255.
 *
 * @param maxLengthBytes {@code x-max-length-bytes}, retention by size; 0 for none
 * @param maxAgeMillis {@code x-max-age} in milliseconds, retention by age; 0 for none
 * @param maxSegmentSizeBytes {@code x-stream-max-segment-size-bytes}; 0 for the log's default
 * @param filterSizeBytes {@code x-stream-filter-size-bytes}; 0 for the log's default
 * @param initialClusterSize {@code x-initial-cluster-size}, kept and shown; one node has one member
 * @param leaderLocator {@code x-queue-leader-locator}, kept and shown; null when none
 */
public record StreamArguments(long maxLengthBytes, long maxAgeMillis, long maxSegmentSizeBytes, int filterSizeBytes,
        long initialClusterSize, String leaderLocator) {
    /** RabbitMQ's {@code ?MAX_STREAM_MAX_SEGMENT_SIZE}. */
    public static final long MAX_SEGMENT_SIZE_BYTES = 3_000_000_000L;
    public static final int MIN_FILTER_SIZE_BYTES = 16;
    public static final int MAX_FILTER_SIZE_BYTES = 255;

    /**
     * Checks a new stream's declaration.
     *
     * @throws BrokerException PRECONDITION_FAILED for a bad argument, INVALID for a property a stream refuses
     */
    static void check(String vhost, QueueDeclaration declaration) {
        of(vhost, declaration.name(), declaration.arguments());
        QueueType.refuseAllButDurable(vhost, declaration);
        Object segment = declaration.arguments().get("x-stream-max-segment-size-bytes");
        if (segment != null && ((Number) segment).longValue() > MAX_SEGMENT_SIZE_BYTES) {
            throw new BrokerException(Kind.INVALID, "Exceeded max value for x-stream-max-segment-size-bytes");
        }
        Object filter = declaration.arguments().get("x-stream-filter-size-bytes");
        if (filter != null && (((Number) filter).longValue() < MIN_FILTER_SIZE_BYTES
                || ((Number) filter).longValue() > MAX_FILTER_SIZE_BYTES)) {
            throw new BrokerException(Kind.INVALID, "Invalid value for x-stream-filter-size-bytes");
        }
    }

    /**
     * Reads a stream's arguments, checking their values and refusing those of other queue types.
     *
     * @throws BrokerException PRECONDITION_FAILED in RabbitMQ's words
     */
    public static StreamArguments of(String vhost, String queue, Map<String, Object> arguments) {
        QueueArguments.Check check = new QueueArguments.Check(vhost, queue, arguments);
        long maxLengthBytes = check.integer("x-max-length-bytes", 0, Long.MAX_VALUE);
        long maxAge = 0;
        if (arguments.containsKey("x-max-age")) {
            Object value = arguments.get("x-max-age");
            if (!(value instanceof CharSequence)) {
                check.string("x-max-age"); // {unacceptable_type,long}
            }
            maxAge = maxAge(value.toString());
            if (maxAge < 0) {
                throw check.invalid("x-max-age", "invalid_max_age");
            }
        }
        long segment = check.integer("x-stream-max-segment-size-bytes", 0, Long.MAX_VALUE);
        long filter = check.integer("x-stream-filter-size-bytes", 0, Long.MAX_VALUE);
        long clusterSize = check.integer("x-initial-cluster-size", 1, Long.MAX_VALUE);
        String locator = null;
        if (arguments.containsKey("x-queue-leader-locator")) {
            locator = check.string("x-queue-leader-locator");
            if (!QueueArguments.LEADER_LOCATORS.contains(locator)) {
                throw check.invalid("x-queue-leader-locator", "invalid_queue_locator_arg");
            }
        }
        String other = QueueType.STREAM.otherTypesArgument(arguments, false);
        if (other != null) {
            throw new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + other + "' for queue '" + queue
                + "' in vhost '" + vhost + "' of queue type " + QueueType.STREAM.module());
        }
        return new StreamArguments(Math.max(0, maxLengthBytes), maxAge, Math.max(0, segment),
            (int) Math.max(0, Math.min(filter, MAX_FILTER_SIZE_BYTES)), Math.max(1, clusterSize), locator);
    }

    /**
     * These (a stream's declared arguments) with what a policy sets: for a stream the policy wins
     * ({@code rabbit_stream_queue}'s {@code policy_precedence/2}) for {@code max-length-bytes}, {@code max-age} and
     * {@code stream-max-segment-size-bytes}.
     */
    public StreamArguments withPolicy(EffectivePolicy policy) {
        if (policy.definition().isEmpty()) {
            return this;
        }
        long bytes = policy.has("max-length-bytes") ? policy.number("max-length-bytes") : maxLengthBytes;
        long age = policy.has("max-age") ? maxAge(policy.string("max-age")) : maxAgeMillis;
        long segment = policy.has("stream-max-segment-size-bytes") ? policy.number("stream-max-segment-size-bytes")
            : maxSegmentSizeBytes;
        return new StreamArguments(bytes, age, segment, filterSizeBytes, initialClusterSize, leaderLocator);
    }

    /**
     * RabbitMQ's {@code rabbit_amqqueue:check_max_age/1}: digits (more than 0) then one unit of Y (365 days),
     * M (30 days), D, h, m or s; -1 when it is not that.
     */
    public static long maxAge(String value) {
        int digits = 0;
        while (digits < value.length() && value.charAt(digits) >= '0' && value.charAt(digits) <= '9') {
            digits++;
        }
        if (digits == 0 || digits == value.length()) {
            return -1;
        }
        long amount;
        try {
            amount = Long.parseLong(value.substring(0, digits));
        } catch (NumberFormatException e) {
            return -1; // more digits than a long holds
        }
        long unit = switch (value.substring(digits)) {
            case "Y" -> 365L * 24 * 3_600_000;
            case "M" -> 30L * 24 * 3_600_000;
            case "D" -> 24L * 3_600_000;
            case "h" -> 3_600_000L;
            case "m" -> 60_000L;
            case "s" -> 1_000L;
            default -> -1;
        };
        if (amount <= 0 || unit < 0) {
            return -1;
        }
        return amount > Long.MAX_VALUE / unit ? Long.MAX_VALUE : amount * unit;
    }
}
