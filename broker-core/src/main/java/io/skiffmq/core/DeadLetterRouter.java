package io.skiffmq.core;

import io.skiffmq.core.message.Death;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueArguments;
import io.skiffmq.core.routing.Router;
import io.skiffmq.core.time.BrokerClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Routes a virtual host's dead messages, as {@code rabbit_dead_letter:publish/5} does: the death is recorded in the
 * message, which is routed through the queue's dead-letter exchange with its dead-letter routing key (or the keys
 * it was published with: its routing key and its CC header's) to every bound queue except those that would close a
 * cycle with no rejection in it, which are skipped with one warning per cycle. A missing exchange drops the message,
 * as RabbitMQ does.
 *
 * <p>Called on the dying queues' threads; stateless apart from a router per thread and the cycles already logged.
 */
final class DeadLetterRouter implements DeadLetters {
    private static final System.Logger LOG = System.getLogger(DeadLetterRouter.class.getName());
    /** Cycles already warned of, by their queues: bounded, as RabbitMQ's own "log once" is per process. */
    private static final int MAX_CYCLES_REMEMBERED = 10_000;

    private final VirtualHost vhost;
    private final BrokerClock clock;
    private final ThreadLocal<Router> routers = ThreadLocal.withInitial(Router::new);
    private final Set<List<String>> cyclesLogged = ConcurrentHashMap.newKeySet();

    DeadLetterRouter(VirtualHost vhost, BrokerClock clock) {
        this.vhost = vhost;
        this.clock = clock;
    }

    @Override
    public void deadLetter(Message message, Reason reason, String queue, QueueArguments arguments,
            long deliveryCount) {
        Exchange exchange = vhost.exchange(arguments.deadLetterExchange());
        if (exchange == null) {
            LOG.log(System.Logger.Level.DEBUG, "queue ''{0}'': dead-letter exchange ''{1}'' does not exist, a "
                + "message dead-lettered ({2}) is dropped", queue, arguments.deadLetterExchange(), reason.value());
            message.release();
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
            for (Queue target : targets) {
                if (Death.isCycle(history, target.name())) {
                    cycle(target.name(), history);
                } else {
                    target.publish(dead.retain(), null);
                }
            }
        } finally {
            dead.release();
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
