package io.skiffmq.core;

import io.skiffmq.core.message.Death;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueArguments;
import io.skiffmq.core.routing.Router;
import io.skiffmq.core.time.BrokerClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Routes a virtual host's dead messages, as {@code rabbit_dead_letter:publish/5} does: the death is recorded in the
 * message, which is routed through the queue's dead-letter exchange with its dead-letter routing key (or the keys
 * it was published with: its routing key and its CC header's) to every bound queue except those that would close a
 * cycle with no rejection in it, which are skipped with one warning per cycle. A missing exchange drops the message,
 * as RabbitMQ does.
 *
 * <p>At least once (a quorum queue's {@code at-least-once} strategy), the dying queue hears whether every queue the
 * copy went to confirmed it, or that it went nowhere (no exchange, no route: logged once per queue, as RabbitMQ's
 * {@code rabbit_fifo_dlx_worker:log_no_route_once/1}).
 *
 * <p>Called on the dying queues' threads; stateless apart from a router per thread and what was already logged.
 */
final class DeadLetterRouter implements DeadLetters {
    private static final System.Logger LOG = System.getLogger(DeadLetterRouter.class.getName());
    /** Cycles already warned of, by their queues: bounded, as RabbitMQ's own "log once" is per process. */
    private static final int MAX_CYCLES_REMEMBERED = 10_000;

    private final VirtualHost vhost;
    private final BrokerClock clock;
    private final ThreadLocal<Router> routers = ThreadLocal.withInitial(Router::new);
    private final Set<List<String>> cyclesLogged = ConcurrentHashMap.newKeySet();

    /** Queues whose dead letters found no route, warned of once each (bounded as {@link #cyclesLogged}). */
    private final Set<String> noRouteLogged = ConcurrentHashMap.newKeySet();
    /** How long a queue waits to try again what it could not dead-letter at least once. */
    private volatile long retryMillis = DEFAULT_RETRY_MILLIS;

    DeadLetterRouter(VirtualHost vhost, BrokerClock clock) {
        this.vhost = vhost;
        this.clock = clock;
    }

    @Override
    public long retryMillis() {
        return retryMillis;
    }

    void retryMillis(long millis) {
        this.retryMillis = millis;
    }

    @Override
    public void deadLetter(Message message, Reason reason, String queue, QueueArguments arguments,
            long deliveryCount) {
        deadLetter(message, reason, queue, arguments, deliveryCount, null);
    }

    /** As {@link DeadLetters}: at most once when {@code confirmed} is null, else at least once. */
    @Override
    public void deadLetter(Message message, Reason reason, String queue, QueueArguments arguments,
            long deliveryCount, Confirmed confirmed) {
        Exchange exchange = vhost.exchange(arguments.deadLetterExchange());
        if (exchange == null) {
            LOG.log(System.Logger.Level.DEBUG, "queue ''{0}'': dead-letter exchange ''{1}'' does not exist, a "
                + "message dead-lettered ({2}) is {3}", queue, arguments.deadLetterExchange(), reason.value(),
                confirmed == null ? "dropped" : "kept to be tried again");
            message.release();
            if (confirmed != null) {
                noRoute(queue, arguments);
                confirmed.taken(false);
            }
            return;
        }
        String key = arguments.deadLetterRoutingKey() != null ? arguments.deadLetterRoutingKey()
            : message.routingKey() == null ? "" : message.routingKey();
        // without a dead-letter routing key, the message goes with every key it had, its CC ones too
        List<String> moreKeys = arguments.deadLetterRoutingKey() == null ? message.ccRoutes() : null;
        Message dead;
        try {
            dead = message.deadLettered(reason.value(), queue, Instant.ofEpochMilli(clock.millis()), exchange.name(),
                key, deliveryCount);
        } finally {
            message.release();
        }
        try {
            List<Queue> targets = vhost.route(exchange, key, moreKeys, dead, routers.get(), new ArrayList<>());
            // topic subscriptions take what their selector matches, dead letters too
            io.skiffmq.core.filter.SubscriptionFilter.retainAccepting(dead, targets, null);
            // a client's rejection breaks any cycle, so rejected messages are not checked (as in RabbitMQ)
            List<Death> history = reason == Reason.REJECTED || targets.isEmpty() ? List.of() : dead.deaths();
            targets.removeIf(target -> {
                boolean cycle = Death.isCycle(history, target.name());
                if (cycle) {
                    cycle(target.name(), history);
                }
                return cycle;
            });
            if (confirmed != null && targets.isEmpty()) {
                noRoute(queue, arguments);
                confirmed.taken(false);
                return;
            }
            PublishConfirm confirms = confirmed == null ? null : new TargetConfirms(targets.size(), confirmed);
            for (Queue target : targets) {
                target.publish(dead.retain(), confirms);
            }
        } finally {
            dead.release();
        }
    }

    /** Every target's confirm of one copy: the dying queue hears once all have answered. */
    private static final class TargetConfirms implements PublishConfirm {
        private final AtomicInteger left;
        private final Confirmed confirmed;
        private volatile boolean refused;

        TargetConfirms(int targets, Confirmed confirmed) {
            this.left = new AtomicInteger(targets);
            this.confirmed = confirmed;
        }

        @Override
        public void run() {
            if (left.decrementAndGet() == 0) {
                confirmed.taken(!refused);
            }
        }

        @Override
        public void refused() {
            refused = true;
            run();
        }
    }

    private void noRoute(String queue, QueueArguments arguments) {
        if (noRouteLogged.size() < MAX_CYCLES_REMEMBERED && noRouteLogged.add(queue)) {
            LOG.log(System.Logger.Level.WARNING, "Cannot forward any dead-letter messages from source quorum queue "
                + "''{0}'' in vhost ''{1}'' with configured dead-letter-exchange exchange ''{2}'' in vhost ''{1}'' "
                + "and configured dead-letter-routing-key ''{3}''. This can happen either if the dead-letter routing "
                + "topology is misconfigured (for example no queue bound to dead-letter-exchange or wrong "
                + "dead-letter-routing-key configured) or if non-mirrored classic queues are bound whose host node "
                + "is down. Fix this issue to prevent dead-lettered messages from piling up in the source quorum "
                + "queue. This message will not be logged again.", queue, vhost.name(),
                arguments.deadLetterExchange(), arguments.deadLetterRoutingKey() == null ? "undefined"
                    : arguments.deadLetterRoutingKey());
        }
    }

    private void cycle(String target, List<Death> history) {
        List<String> queues = new ArrayList<>(history.size() + 1);
        queues.add(target);
        history.forEach(d -> queues.add(d.queue()));
        if (cyclesLogged.size() < MAX_CYCLES_REMEMBERED && cyclesLogged.add(queues)) {
            LOG.log(System.Logger.Level.WARNING, "Message dropped because the following list of queues (ordered by "
                + "death recency) contains a dead letter cycle without reason ''rejected''. This list will not be "
                + "logged again: {0}", queues);
        }
    }
}
