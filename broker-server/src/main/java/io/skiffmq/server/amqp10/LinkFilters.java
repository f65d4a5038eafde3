package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.filter.SelectorException;
import io.skiffmq.core.filter.SubscriptionFilter;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamQueue;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * The filters of a consumer's source [3.5.1 filter-set, 3.5.8]: which we honour, and the filter-set we echo on the
 * attach reply, which says so [3.5.3]. Filters are known by their descriptor, whatever their key (the AMQP filters
 * registry: Qpid JMS keys them {@code jms-selector} and {@code no-local}):
 *
 * <ul>
 * <li>{@code apache.org:selector-filter:string} (0x0000468C00000004): a JMS selector. On a queue the consumer gets
 * the messages it matches ({@link io.skiffmq.core.queue.SelectiveDispatch}); on a topic subscription it filters what
 * enters the subscription's queue ({@link SubscriptionFilter}). A selector that does not parse detaches the link with
 * {@code amqp:invalid-field}, naming the position and the problem.</li>
 * <li>{@code apache.org:no-local-filter:list} (0x0000468C00000003): on topic subscriptions only, messages published
 * on the subscriber's own connection are left out. On a queue it is not honoured, and not echoed.</li>
 * <li>RabbitMQ's stream filters ({@link StreamSourceFilters}): where a stream consumer starts and which chunks it
 * reads. Honoured, and echoed, on a stream only.</li>
 * </ul>
 *
 * Any other filter is left out of the reply, never echoed, as RabbitMQ does with filters it does not implement: the
 * client learns that it is not applied. Immutable once read; made and used on the connection's event loop.
 */
final class LinkFilters {
    static final Symbol SELECTOR = Symbol.valueOf("apache.org:selector-filter:string");
    static final UnsignedLong SELECTOR_CODE = UnsignedLong.valueOf(0x0000468C00000004L);
    static final Symbol NO_LOCAL = Symbol.valueOf("apache.org:no-local-filter:list");
    static final UnsignedLong NO_LOCAL_CODE = UnsignedLong.valueOf(0x0000468C00000003L);

    /** For an attach without a source (Qpid JMS looking a durable subscription up to end it): no filters. */
    static final LinkFilters NONE = new LinkFilters(null, null, false, false, null, null);

    private final Map<Symbol, Object> echoed;
    private final Selector selector;
    private final boolean noLocal;
    private final boolean topic;
    /** The stream filters taken, or null for none; {@link #streamKeys} are their keys in {@link #echoed}. */
    private final StreamSourceFilters stream;
    private final List<Symbol> streamKeys;

    private LinkFilters(Map<Symbol, Object> echoed, Selector selector, boolean noLocal, boolean topic,
            StreamSourceFilters stream, List<Symbol> streamKeys) {
        this.echoed = echoed;
        this.selector = selector;
        this.noLocal = noLocal;
        this.topic = topic;
        this.stream = stream;
        this.streamKeys = streamKeys;
    }

    /**
     * Reads a source's filter-set.
     *
     * @param topic the source is a topic subscription (no-local applies)
     * @throws AmqpException {@code amqp:invalid-field} for a selector that is not a string or does not parse
     */
    static LinkFilters of(long handle, Map<Symbol, Object> filterSet, boolean topic) {
        if (filterSet == null || filterSet.isEmpty()) {
            return new LinkFilters(null, null, false, topic, null, null);
        }
        Map<Symbol, Object> echoed = new LinkedHashMap<>();
        Selector selector = null;
        boolean noLocal = false;
        StreamSourceFilters stream = new StreamSourceFilters();
        List<Symbol> streamKeys = new ArrayList<>();
        // [3.5.8] keys are symbols and values described filters; anything else is not a filter we know
        for (Map.Entry<?, ?> e : ((Map<?, ?>) filterSet).entrySet()) {
            if (!(e.getKey() instanceof Symbol key) || !(e.getValue() instanceof DescribedType filter)) {
                continue;
            }
            Object descriptor = filter.getDescriptor();
            if ((SELECTOR.equals(descriptor) || SELECTOR_CODE.equals(descriptor)) && selector == null) {
                selector = selector(handle, key, filter.getDescribed());
                echoed.put(key, filter);
            } else if ((NO_LOCAL.equals(descriptor) || NO_LOCAL_CODE.equals(descriptor)) && topic && !noLocal) {
                noLocal = true;
                echoed.put(key, filter);
            } else if (!topic && stream.take(descriptor, filter.getDescribed())) {
                streamKeys.add(key);
                echoed.put(key, filter);
            }
        }
        return new LinkFilters(echoed.isEmpty() ? null : echoed, selector, noLocal, topic,
            streamKeys.isEmpty() ? null : stream, streamKeys);
    }

    private static Selector selector(long handle, Symbol key, Object text) {
        if (!(text instanceof String s)) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "selector filter '%s' must be a string, "
                + "not %s", key, text);
        }
        try {
            return Selector.parse(s);
        } catch (SelectorException e) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "invalid selector \"%s\": %s", s,
                e.getMessage());
        }
    }

    /**
     * The filter-set to echo: the filters honoured, as the client sent them; null for none. The stream filters only
     * {@code onStream}: another queue honours none.
     */
    Map<Symbol, Object> echoed(boolean onStream) {
        if (onStream || stream == null) {
            return echoed;
        }
        Map<Symbol, Object> honoured = new LinkedHashMap<>(echoed);
        honoured.keySet().removeAll(streamKeys);
        return honoured.isEmpty() ? null : honoured;
    }

    /**
     * What a consumer of {@code queue} reads from and through (its stream filters; from the next message without).
     *
     * @throws AmqpException as {@link StreamSourceFilters#consumerArguments}
     */
    StreamConsumerArguments streamArguments(long handle, StreamQueue queue, String vhost) {
        return (stream == null ? new StreamSourceFilters() : stream).consumerArguments(handle, queue, vhost);
    }

    /** The selector a queue consumer applies; null on a topic subscription (its queue filters) or without one. */
    Selector consumerSelector() {
        return topic ? null : selector;
    }

    /** The arguments of a topic subscription's queue that carry its filters ({@link SubscriptionFilter}). */
    Map<String, Object> subscriptionArguments() {
        Map<String, Object> arguments = new HashMap<>();
        if (topic && selector != null) {
            arguments.put(SubscriptionFilter.SELECTOR_ARGUMENT, selector.text());
        }
        if (topic && noLocal) {
            arguments.put(SubscriptionFilter.NO_LOCAL_ARGUMENT, true);
        }
        return arguments;
    }

    /** The link consumes from {@code queue} on {@code connection}: its no-local leaves that connection's messages out. */
    void attached(Queue queue, Object connection) {
        SubscriptionFilter filter = queue.subscriptionFilter();
        if (noLocal && filter != null) {
            filter.subscriber(connection);
        }
    }

    /** The link left: no message is local to it any more. */
    void detached(Queue queue, Object connection) {
        SubscriptionFilter filter = queue == null ? null : queue.subscriptionFilter();
        if (noLocal && filter != null) {
            filter.unsubscribed(connection);
        }
    }
}
