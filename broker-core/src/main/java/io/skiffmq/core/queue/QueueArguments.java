package io.skiffmq.core.queue;

import io.skiffmq.core.filter.SubscriptionFilter;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.policy.EffectivePolicy;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A classic queue's {@code x-} arguments, checked as RabbitMQ checks them ({@code rabbit_amqqueue:declare_args/0})
 * and read into what the queue acts on. The same checks serve every protocol: a refusal is a
 * {@link BrokerException} with RabbitMQ's text ({@code invalid arg 'x-…' for queue 'q' in vhost '/': …}), which
 * AMQP 0-9-1 sends as 406 and the AMQP 1.0 management node as 409.
 *
 * <p>Arguments RabbitMQ does not know are kept and ignored, as RabbitMQ keeps them. Those it knows for its quorum and
 * stream queues only are refused for a classic queue, as RabbitMQ refuses them, except {@code x-delivery-limit},
 * which SkiffMQ's classic queues implement (docs/queues.md). Other queue types are checked as theirs
 * ({@link QueueType}).
 *
 * @param maxLength ready messages kept at most, -1 for no limit
 * @param maxLengthBytes bytes of ready messages kept at most, -1 for no limit
 * @param messageTtl milliseconds a message may wait in the queue, -1 for no limit
 * @param expires milliseconds the queue may go unused before it is deleted, -1 for never
 * @param deadLetterExchange where messages that die go, null for nowhere
 * @param deadLetterRoutingKey the routing key they go with, null for the one they were published with
 * @param deliveryLimit failed deliveries after which a message dies, -1 for no limit
 * @param maxPriority the highest message priority told apart, 0 for a queue without priorities
 * @param confirmAfterConsume a publisher's confirm waits until a consumer settled the message
 * @param subscriptionFilter SkiffMQ's {@code x-selector} and {@code x-no-local} (a topic subscription's queue:
 *        {@link SubscriptionFilter}), null for none
 */
public record QueueArguments(long maxLength, long maxLengthBytes, Overflow overflow, long messageTtl, long expires,
        String deadLetterExchange, String deadLetterRoutingKey, long deliveryLimit, int maxPriority,
        boolean singleActiveConsumer, boolean confirmAfterConsume, SubscriptionFilter subscriptionFilter) {

    /** A queue without arguments. */
    public static final QueueArguments NONE = new QueueArguments(-1, -1, Overflow.DROP_HEAD, -1, -1, null, null, -1,
        0, false, false, null);

    /** SkiffMQ's own argument: confirms (and AMQP 1.0 {@code accepted}) once consumed, not once queued. */
    public static final String CONFIRM_AFTER_CONSUME = "x-confirm-after-consume";

    /** What happens to a message that would take the queue past {@code x-max-length} or {@code x-max-length-bytes}. */
    public enum Overflow {
        /** The oldest ready messages die (reason {@code maxlen}) to make room. */
        DROP_HEAD("drop-head"),
        /** The new message is refused: nacked under 0-9-1 confirms, {@code rejected} over AMQP 1.0. */
        REJECT_PUBLISH("reject-publish"),
        /** Refused as {@link #REJECT_PUBLISH}, and dead-lettered. */
        REJECT_PUBLISH_DLX("reject-publish-dlx");

        private final String value;

        Overflow(String value) {
            this.value = value;
        }

        public String value() {
            return value;
        }

        /** The overflow named so, or null. */
        public static Overflow of(String value) {
            for (Overflow o : values()) {
                if (o.value.equals(value)) {
                    return o;
                }
            }
            return null;
        }
    }

    /** RabbitMQ caps {@code x-max-priority} here. */
    public static final int MAX_SUPPORTED_PRIORITY = 255;
    /** RabbitMQ's limit for TTLs and expiry: ten years in milliseconds. */
    static final long MAX_EXPIRY = 315_360_000_000L;

    /** Arguments RabbitMQ accepts only for its quorum or stream queues; refused here, as it refuses them. */
    private static final Set<String> OTHER_TYPES_ONLY = Set.of("x-dead-letter-strategy", "x-max-in-memory-length",
        "x-max-in-memory-bytes", "x-quorum-initial-group-size", "x-member-placement-tag",
        "x-consumer-disconnected-timeout", "x-consumer-timeout", "x-delayed-retry-type", "x-delayed-retry-min",
        "x-delayed-retry-max", "x-max-age", "x-stream-max-segment-size-bytes", "x-stream-filter-size-bytes",
        "x-initial-cluster-size");
    /**
     * RabbitMQ 4's {@code rabbit_queue_location:queue_leader_locators/0}: the last three are deprecated and mean
     * {@code balanced}. On one node every value places the queue here.
     */
    static final List<String> LEADER_LOCATORS = List.of("client-local", "balanced", "random",
        "least-leaders", "min-masters");

    /**
     * The declaration's arguments, for a queue being made. A new declaration was checked by its virtual host
     * already; one recovered from an older broker that did not check them (0-9-1 kept every argument unread) keeps
     * its queue, without them.
     */
    static QueueArguments orNone(String vhost, QueueDeclaration declaration) {
        try {
            return of(vhost, declaration.name(), declaration.arguments());
        } catch (BrokerException e) {
            System.getLogger(ClassicQueue.class.getName()).log(System.Logger.Level.WARNING, "queue ''{0}'' in vhost "
                + "''{1}'' has arguments this broker refuses ({2}): it runs without any of them; delete and declare "
                + "it again to use them", declaration.name(), vhost, e.getMessage());
            return NONE;
        }
    }

    /**
     * Checks and reads a declaration's arguments.
     *
     * @throws BrokerException PRECONDITION_FAILED for a bad value or an argument of another queue type,
     *         NOT_IMPLEMENTED for a queue type SkiffMQ lacks
     */
    public static QueueArguments of(String vhost, String queue, Map<String, Object> arguments) {
        if (arguments.isEmpty()) {
            return NONE;
        }
        Check check = new Check(vhost, queue, arguments);
        if (arguments.containsKey("x-queue-type") && !check.string("x-queue-type").equals("classic")) {
            // the other types RabbitMQ knows are checked as theirs (QueueType)
            throw check.invalid("x-queue-type", quoted("unsupported queue type '"
                + arguments.get("x-queue-type") + "'"));
        }
        // the values in rabbit_amqqueue:declare_args/0's order, so that of several bad ones RabbitMQ's first is named
        long expires = check.integer("x-expires", 1, MAX_EXPIRY);
        long ttl = check.integer("x-message-ttl", 0, MAX_EXPIRY);
        String dlx = arguments.containsKey("x-dead-letter-exchange") ? check.string("x-dead-letter-exchange") : null;
        String dlrk = check.deadLetterRoutingKey(dlx);
        long maxLength = check.integer("x-max-length", 0, Long.MAX_VALUE);
        long maxLengthBytes = check.integer("x-max-length-bytes", 0, Long.MAX_VALUE);
        int maxPriority = (int) Math.max(0, check.integer("x-max-priority", 0, MAX_SUPPORTED_PRIORITY));
        Overflow overflow = Overflow.DROP_HEAD;
        if (arguments.containsKey("x-overflow")) {
            overflow = Overflow.of(check.string("x-overflow"));
            if (overflow == null) {
                throw check.invalid("x-overflow", "invalid_overflow");
            }
        }
        Object mode = arguments.get("x-queue-mode");
        if (mode != null && !check.string("x-queue-mode").equals("default") && !mode.toString().equals("lazy")) {
            // RabbitMQ 4's classic queues accept both and behave alike: every classic queue pages out now
            throw check.invalid("x-queue-mode", quoted("unsupported queue mode '" + mode + "'"));
        }
        if (arguments.containsKey("x-queue-leader-locator")
                && !LEADER_LOCATORS.contains(check.string("x-queue-leader-locator"))) {
            throw check.invalid("x-queue-leader-locator", "invalid_queue_locator_arg"); // one node: no effect
        }
        if (arguments.containsKey("x-queue-version") && check.integer("x-queue-version", 0, Long.MAX_VALUE) != 2) {
            throw check.invalid("x-queue-version", quoted("unsupported queue version '"
                + arguments.get("x-queue-version") + "'"));
        }
        boolean singleActiveConsumer = check.bool("x-single-active-consumer");
        long deliveryLimit = check.integer("x-delivery-limit", 0, Long.MAX_VALUE);
        boolean confirmAfterConsume = check.bool(CONFIRM_AFTER_CONSUME);
        // then the arguments only other queue types take (rabbit_amqqueue:check_arguments_key/4)
        for (String key : arguments.keySet()) {
            if (OTHER_TYPES_ONLY.contains(key)) {
                throw new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + key + "' for queue '" + queue
                    + "' in vhost '" + vhost + "' of queue type rabbit_classic_queue");
            }
        }
        return new QueueArguments(maxLength, maxLengthBytes, overflow, ttl, expires, dlx, dlrk, deliveryLimit,
            maxPriority, singleActiveConsumer, confirmAfterConsume, subscriptionFilter(check, arguments));
    }

    private static SubscriptionFilter subscriptionFilter(Check check, Map<String, Object> arguments) {
        try {
            return SubscriptionFilter.of(arguments);
        } catch (IllegalArgumentException e) {
            String key = arguments.containsKey(SubscriptionFilter.SELECTOR_ARGUMENT)
                ? SubscriptionFilter.SELECTOR_ARGUMENT : SubscriptionFilter.NO_LOCAL_ARGUMENT;
            throw check.invalid(key, quoted(e.getMessage()));
        }
    }

    /** A reason RabbitMQ formats as a string, which its {@code ~p} prints in double quotes. */
    static String quoted(String reason) {
        return '"' + reason + '"';
    }

    /**
     * These (a classic queue's declared arguments) with what a policy sets, by RabbitMQ's precedence for classic
     * queues ({@code rabbit_amqqueue_process:process_args_policy/1}): the smaller value wins for
     * {@code message-ttl}, {@code expires}, {@code max-length} and {@code max-length-bytes}; the argument wins for
     * the dead-letter keys and {@code overflow}. {@code delivery-limit}, which RabbitMQ's classic queues lack, takes
     * the smaller too, as its quorum queues do. Called when a policy changes, never per message.
     *
     * @param declared the declaration's arguments: whether one sets a key, for the keys where it wins
     */
    public QueueArguments withPolicy(Map<String, Object> declared, EffectivePolicy policy) {
        if (policy.definition().isEmpty()) {
            return this;
        }
        Overflow o = declared.containsKey("x-overflow") || !policy.has("overflow") ? overflow
            : Overflow.of(policy.string("overflow"));
        String dlx = declared.containsKey("x-dead-letter-exchange") || !policy.has("dead-letter-exchange")
            ? deadLetterExchange : policy.string("dead-letter-exchange");
        String dlrk = declared.containsKey("x-dead-letter-routing-key") || !policy.has("dead-letter-routing-key")
            ? deadLetterRoutingKey : policy.string("dead-letter-routing-key");
        return new QueueArguments(maxLength, maxLengthBytes, o, messageTtl, expires, dlx, dlrk,
            smaller(deliveryLimit, policy.number("delivery-limit")), maxPriority, singleActiveConsumer,
            confirmAfterConsume, subscriptionFilter).withSmallerLimits(policy);
    }

    /**
     * These with the smaller of each limit and the policy's: {@code max-length}, {@code max-length-bytes},
     * {@code message-ttl} and {@code expires}, as classic and quorum queues both take them.
     */
    QueueArguments withSmallerLimits(EffectivePolicy policy) {
        return new QueueArguments(smaller(maxLength, policy.number("max-length")),
            smaller(maxLengthBytes, policy.number("max-length-bytes")), overflow,
            smaller(messageTtl, policy.number("message-ttl")), smaller(expires, policy.number("expires")),
            deadLetterExchange, deadLetterRoutingKey, deliveryLimit, maxPriority, singleActiveConsumer,
            confirmAfterConsume, subscriptionFilter);
    }

    /** The smaller of two limits, -1 (or any negative) meaning none. */
    private static long smaller(long a, long b) {
        return a < 0 ? Math.max(b, -1) : b < 0 ? a : Math.min(a, b);
    }

    /** True when a message may die here with somewhere to go. */
    public boolean deadLetters() {
        return deadLetterExchange != null;
    }

    /** Reads arguments and words refusals as RabbitMQ does. */
    record Check(String vhost, String queue, Map<String, Object> arguments) {
        BrokerException invalid(String key, String detail) {
            return new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + key + "' for queue '" + queue
                + "' in vhost '" + vhost + "': " + detail);
        }

        /** An integer argument in {@code min..max}, or -1 when absent; a void (null) one is no integer. */
        long integer(String key, long min, long max) {
            if (!arguments.containsKey(key)) {
                return -1;
            }
            Object value = arguments.get(key);
            if (!(value instanceof Number n) || !integral(n)) {
                throw invalid(key, quoted("expected integer, got " + HeaderValues.fieldType(value))); // check_int_arg/2
            }
            long v = n.longValue();
            if (v < min) {
                throw invalid(key, (v < 0 ? "{value_negative," : "{value_zero,") + v + "}");
            }
            if (v > max) {
                throw invalid(key, (key.equals("x-max-priority") ? "{max_value_exceeded," : "{value_too_large,") + v
                    + "}");
            }
            return v;
        }

        /** {@code x-dead-letter-routing-key}, or null; refused without a dead-letter exchange ({@code dlx} null). */
        String deadLetterRoutingKey(String dlx) {
            if (!arguments.containsKey("x-dead-letter-routing-key")) {
                return null;
            }
            String dlrk = string("x-dead-letter-routing-key");
            if (dlx == null) {
                throw invalid("x-dead-letter-routing-key", "routing_key_but_no_dlx_defined");
            }
            return dlrk;
        }

        String string(String key) {
            Object value = arguments.get(key);
            if (value instanceof CharSequence s) {
                return s.toString();
            }
            if (value != null && value.getClass().getSimpleName().equals("Symbol")) {
                return value.toString(); // an AMQP 1.0 symbol, as the management node may decode one
            }
            throw invalid(key, "{unacceptable_type," + HeaderValues.fieldType(value) + "}");
        }

        boolean bool(String key) {
            if (!arguments.containsKey(key)) {
                return false;
            }
            Object value = arguments.get(key);
            if (value instanceof Boolean b) {
                return b;
            }
            throw invalid(key, "{unacceptable_type," + HeaderValues.fieldType(value) + "}");
        }

        private static boolean integral(Number n) {
            return !(n instanceof Double || n instanceof Float || n instanceof BigDecimal);
        }
    }
}
