package io.skiffmq.core.queue;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.policy.EffectivePolicy;
import io.skiffmq.core.queue.QueueArguments.Overflow;
import java.util.List;
import java.util.Map;

/**
 * A quorum queue's {@code x-} arguments and properties, checked and read as RabbitMQ 4.0 does: the values as
 * {@code rabbit_amqqueue:declare_args/0} checks those of {@code rabbit_quorum_queue}'s capabilities (in its order),
 * then the arguments only other types take ({@code … of queue type rabbit_quorum_queue}), then what
 * {@code rabbit_quorum_queue:declare/2} refuses: auto-delete, exclusive and non-durable queues. Read into the
 * {@link QueueArguments} the queue acts on, with the quorum defaults ({@code gather_policy_config/2}): a delivery
 * limit of {@value #DEFAULT_DELIVERY_LIMIT} unless one is given (negative: none), and {@code reject-publish-dlx},
 * which RabbitMQ accepts and logs as invalid for a quorum queue, read as {@code drop-head}. Immutable; static only.
 */
public final class QuorumArguments {
    /** RabbitMQ 4.0's {@code ?DEFAULT_DELIVERY_LIMIT}. */
    public static final long DEFAULT_DELIVERY_LIMIT = 20;
    /** RabbitMQ's {@code ?KNOWN_DLX_STRATEGIES}. */
    private static final List<String> DLX_STRATEGIES = List.of("at-most-once", "at-least-once");
    private static final System.Logger LOG = System.getLogger(QuorumArguments.class.getName());

    private QuorumArguments() {
    }

    /**
     * Checks a new quorum queue's declaration.
     *
     * @throws BrokerException PRECONDITION_FAILED for a bad argument, INVALID for a property a quorum queue refuses
     */
    static void check(String vhost, QueueDeclaration declaration) {
        of(vhost, declaration.name(), declaration.arguments(), false);
        QueueType.refuseAllButDurable(vhost, declaration);
    }

    /**
     * Reads a quorum queue's arguments, checking their values and refusing those of other queue types.
     *
     * @param recovered a queue being restored: an overflow RabbitMQ ignores is not logged again
     * @throws BrokerException PRECONDITION_FAILED in RabbitMQ's words
     */
    static QueueArguments of(String vhost, String queue, Map<String, Object> arguments, boolean recovered) {
        QueueArguments.Check check = new QueueArguments.Check(vhost, queue, arguments);
        long expires = check.integer("x-expires", 1, QueueArguments.MAX_EXPIRY);
        long ttl = check.integer("x-message-ttl", 0, QueueArguments.MAX_EXPIRY);
        String dlx = arguments.containsKey("x-dead-letter-exchange") ? check.string("x-dead-letter-exchange") : null;
        String dlrk = check.deadLetterRoutingKey(dlx);
        if (arguments.containsKey("x-dead-letter-strategy")
                && !DLX_STRATEGIES.contains(check.string("x-dead-letter-strategy"))) {
            throw check.invalid("x-dead-letter-strategy", "invalid_dlx_strategy");
        }
        long maxLength = check.integer("x-max-length", 0, Long.MAX_VALUE);
        long maxLengthBytes = check.integer("x-max-length-bytes", 0, Long.MAX_VALUE);
        check.integer("x-max-in-memory-length", 0, Long.MAX_VALUE); // checked and kept; every message is on disk
        check.integer("x-max-in-memory-bytes", 0, Long.MAX_VALUE);
        Overflow overflow = Overflow.DROP_HEAD;
        if (arguments.containsKey("x-overflow")) {
            overflow = Overflow.of(check.string("x-overflow"));
            if (overflow == null) {
                throw check.invalid("x-overflow", "invalid_overflow");
            }
            overflow = quorumOverflow(overflow, vhost, queue, recovered);
        }
        boolean singleActiveConsumer = check.bool("x-single-active-consumer");
        check.integer("x-quorum-initial-group-size", 1, Long.MAX_VALUE); // one node: one member, whatever asked
        if (arguments.containsKey("x-queue-leader-locator")
                && !QueueArguments.LEADER_LOCATORS.contains(check.string("x-queue-leader-locator"))) {
            throw check.invalid("x-queue-leader-locator", "invalid_queue_locator_arg");
        }
        String other = QueueType.QUORUM.otherTypesArgument(arguments, false);
        if (other != null) {
            throw new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + other + "' for queue '" + queue
                + "' in vhost '" + vhost + "' of queue type " + QueueType.QUORUM.module());
        }
        return new QueueArguments(maxLength, maxLengthBytes, overflow, ttl, expires, dlx, dlrk,
            deliveryLimit(arguments.get("x-delivery-limit")), 0, singleActiveConsumer, false, null);
    }

    /**
     * A restored quorum queue's arguments: as {@link #of}, or with the defaults alone when this broker refuses them
     * (a definitions file from elsewhere), logged.
     */
    static QueueArguments orDefaults(String vhost, QueueDeclaration declaration) {
        try {
            return of(vhost, declaration.name(), declaration.arguments(), true);
        } catch (BrokerException e) {
            LOG.log(System.Logger.Level.WARNING, "quorum queue ''{0}'' in vhost ''{1}'' has arguments this broker "
                + "refuses ({2}): it runs without them", declaration.name(), vhost, e.getMessage());
            return new QueueArguments(-1, -1, Overflow.DROP_HEAD, -1, -1, null, null, DEFAULT_DELIVERY_LIMIT, 0,
                false, false, null);
        }
    }

    /**
     * {@code x-delivery-limit}: RabbitMQ 4.0 does not check its value at declaration and reads a number; no number
     * means its default, a negative one no limit.
     */
    private static long deliveryLimit(Object value) {
        if (!(value instanceof Number n)) {
            return DEFAULT_DELIVERY_LIMIT;
        }
        return n.longValue() < 0 ? -1 : n.longValue();
    }

    /** {@code reject-publish-dlx} is accepted and read as {@code drop-head}, as {@code rabbit_quorum_queue:overflow/3}. */
    private static Overflow quorumOverflow(Overflow overflow, String vhost, String queue, boolean quiet) {
        if (overflow != Overflow.REJECT_PUBLISH_DLX) {
            return overflow;
        }
        if (!quiet) {
            LOG.log(System.Logger.Level.WARNING, "Invalid overflow strategy \"reject-publish-dlx\" for quorum queue: "
                + "queue ''{0}'' in vhost ''{1}''", queue, vhost);
        }
        return Overflow.DROP_HEAD;
    }

    /**
     * A quorum queue's arguments with what a policy sets, by {@code rabbit_quorum_queue:gather_policy_config/2}'s
     * precedence: the smaller for {@code max-length}, {@code max-length-bytes}, {@code expires} and
     * {@code message-ttl}; the policy's {@code overflow}; the argument's dead-letter keys; for
     * {@code delivery-limit} the larger when either is negative (none), else the smaller, and the default when
     * neither sets one.
     */
    static QueueArguments withPolicy(QueueArguments declared, Map<String, Object> arguments, EffectivePolicy policy) {
        if (policy.definition().isEmpty()) {
            return declared;
        }
        Overflow o = policy.has("overflow")
            ? quorumOverflow(Overflow.of(policy.string("overflow")), "", "", true) : declared.overflow();
        String dlx = arguments.containsKey("x-dead-letter-exchange") || !policy.has("dead-letter-exchange")
            ? declared.deadLetterExchange() : policy.string("dead-letter-exchange");
        String dlrk = arguments.containsKey("x-dead-letter-routing-key") || !policy.has("dead-letter-routing-key")
            ? declared.deadLetterRoutingKey() : policy.string("dead-letter-routing-key");
        long limit = declared.deliveryLimit();
        if (policy.has("delivery-limit")) {
            long p = policy.number("delivery-limit");
            if (!(arguments.get("x-delivery-limit") instanceof Number a)) {
                limit = p < 0 ? -1 : p;
            } else {
                long v = a.longValue();
                limit = p < 0 || v < 0 ? Math.max(p, v) : Math.min(p, v);
                limit = limit < 0 ? -1 : limit;
            }
        }
        QueueArguments base = new QueueArguments(declared.maxLength(), declared.maxLengthBytes(), o,
            declared.messageTtl(), declared.expires(), dlx, dlrk, limit, 0, declared.singleActiveConsumer(), false,
            null);
        return base.withSmallerLimits(policy);
    }

    /**
     * Whether the quorum queue dead-letters at least once ({@link AtLeastOnceDeadLetters}), by
     * {@code rabbit_quorum_queue:dlh/5}: {@code x-dead-letter-strategy} (the argument over the policy's
     * {@code dead-letter-strategy}) {@code at-least-once}, with a dead-letter exchange and {@code reject-publish}
     * overflow. Otherwise at most once, with RabbitMQ's warning when at-least-once was asked for.
     */
    static boolean atLeastOnce(String vhost, String queue, QueueArguments inEffect, Map<String, Object> arguments,
            EffectivePolicy policy) {
        Object strategy = arguments.containsKey("x-dead-letter-strategy") ? arguments.get("x-dead-letter-strategy")
            : policy.has("dead-letter-strategy") ? policy.string("dead-letter-strategy") : null;
        if (!"at-least-once".equals(String.valueOf(strategy))) {
            return false;
        }
        if (!inEffect.deadLetters()) {
            LOG.log(System.Logger.Level.WARNING, "Disabling dead-lettering for queue ''{0}'' in vhost ''{1}'' despite "
                + "configured dead-letter-strategy ''at-least-once'' because dead-letter-exchange is not configured.",
                queue, vhost);
            return false;
        }
        if (inEffect.overflow() != Overflow.REJECT_PUBLISH) {
            LOG.log(System.Logger.Level.WARNING, "Falling back to dead-letter-strategy at-most-once for queue ''{0}'' "
                + "in vhost ''{1}'' because configured dead-letter-strategy at-least-once is incompatible with "
                + "effective overflow strategy drop-head. To enable dead-letter-strategy at-least-once, set overflow "
                + "strategy to reject-publish.", queue, vhost);
            return false;
        }
        return true;
    }
}
