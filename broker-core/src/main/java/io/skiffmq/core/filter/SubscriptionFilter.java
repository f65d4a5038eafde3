package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Queue;
import java.util.List;
import java.util.Map;

/**
 * What a topic subscription's queue takes: the messages its selector matches ({@value #SELECTOR_ARGUMENT}), and
 * with {@value #NO_LOCAL_ARGUMENT} none published on the subscriber's own connection (JMS no-local). Both are
 * queue arguments, so a durable subscription's filter is saved with its queue and survives a restart; the
 * subscriber's connection is not saved: it is told by the consuming link while it is attached
 * ({@link #subscriber}), and without one no message is local.
 *
 * <p>Checked where a message is routed, on the routing thread, before it goes to its queues
 * ({@link #retainAccepting}: {@code Publisher}, dead-lettering, the HTTP API's publish): a message that does not
 * pass never enters the queue, and the message itself carries nothing for it (the publishing connection is the
 * publisher's, known where it routes). The selector is immutable; the subscriber is written by the consuming
 * connection's thread and read by the routing threads (volatile).
 */
public final class SubscriptionFilter {
    /** The queue argument holding a subscription's selector (a string). */
    public static final String SELECTOR_ARGUMENT = "x-selector";
    /** The queue argument asking that messages of the subscriber's own connection are left out (a boolean). */
    public static final String NO_LOCAL_ARGUMENT = "x-no-local";

    private final Selector selector;
    private final boolean noLocal;
    private volatile Object subscriber;

    private SubscriptionFilter(Selector selector, boolean noLocal) {
        this.selector = selector;
        this.noLocal = noLocal;
    }

    /**
     * The filter a queue's arguments ask for, or null when they ask for none.
     *
     * @throws SelectorException when {@value #SELECTOR_ARGUMENT} is not a selector
     * @throws IllegalArgumentException when an argument has the wrong type
     */
    public static SubscriptionFilter of(Map<String, Object> arguments) {
        Object selector = arguments.get(SELECTOR_ARGUMENT);
        Object noLocal = arguments.get(NO_LOCAL_ARGUMENT);
        if (selector == null && noLocal == null) {
            return null;
        }
        if (selector != null && !(selector instanceof String)) {
            throw new IllegalArgumentException(SELECTOR_ARGUMENT + " must be a string, not " + selector);
        }
        if (noLocal != null && !(noLocal instanceof Boolean)) {
            throw new IllegalArgumentException(NO_LOCAL_ARGUMENT + " must be a boolean, not " + noLocal);
        }
        return new SubscriptionFilter(selector == null ? null : Selector.parse((String) selector),
            Boolean.TRUE.equals(noLocal));
    }

    /** The selector, or null. */
    public Selector selector() {
        return selector;
    }

    public boolean noLocal() {
        return noLocal;
    }

    /**
     * The connection now consuming from the subscription (any object standing for it, compared by identity with
     * the publishing connection), or null when none is.
     */
    public void subscriber(Object connection) {
        subscriber = connection;
    }

    /** The subscriber's connection is {@code connection}: it leaves, and no message is local any more. */
    public void unsubscribed(Object connection) {
        if (subscriber == connection) {
            subscriber = null;
        }
    }

    /**
     * True when the message goes into the subscription's queue.
     *
     * @param publishedBy the connection that published it, null when none did (dead-lettered, the HTTP API)
     */
    public boolean accepts(Message message, Object publishedBy) {
        if (noLocal && publishedBy != null && publishedBy == subscriber) {
            return false;
        }
        return selector == null || selector.matches(message);
    }

    /**
     * Takes out of {@code queues} (a message's route) those whose filter refuses the message; queues without one
     * cost a call each.
     *
     * @return false when no queue is left
     */
    public static boolean retainAccepting(Message message, List<Queue> queues, Object publishedBy) {
        for (int i = queues.size() - 1; i >= 0; i--) {
            SubscriptionFilter filter = queues.get(i).subscriptionFilter();
            if (filter != null && !filter.accepts(message, publishedBy)) {
                queues.remove(i);
            }
        }
        return !queues.isEmpty();
    }
}
