package io.skiffmq.core.routing;

import io.skiffmq.core.Exchange;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.message.Headers;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Routes a message through exchanges to queue names: by type (direct: by key; fanout: everything; topic: the
 * trie; headers: the bindings' arguments against the message's headers; x-local-random: one bound queue of this
 * node at random), through exchange-to-exchange bindings (each exchange visited once, so cycles end), to each queue
 * once, and on to the alternate exchange when an exchange routed nowhere.
 *
 * <p>One per routing thread: {@link #route} reuses its lists, and the callbacks the trie walks call are made once and
 * read what the call routes with from fields, so direct, fanout and topic routing allocate nothing.
 */
public final class Router {
    private final ArrayList<String> queues = new ArrayList<>();
    private final ArrayList<String> visited = new ArrayList<>();
    private final Consumer<Destination> deliverTo = this::deliverFromFields;
    private final Consumer<Binding> matchHeaders = this::matchHeaders;
    // what the callbacks of the trie walks route with: set only by fanout, topic and headers exchanges, and only
    // when changed, so a direct route stores nothing here (each reference store costs GC barriers); kept after the
    // call but for the message's headers, so a Router holds at most one old snapshot
    private BindingTable table;
    private Function<String, Exchange> exchanges;
    /** The message's own routing key, with which it goes on through exchange-to-exchange bindings. */
    private String key;
    private Headers headers;
    private Map<String, Object> headerValues;
    /** The routing keys of the message being routed beside its own (CC and BCC), or null: set per call. */
    private List<String> moreKeys;
    /** {@link #localQueues}: null when every queue is local. */
    private Predicate<String> localQueue;

    /**
     * The names of the queues the message goes to, valid until the next call.
     *
     * @param exchanges looks an exchange up by name (null when absent)
     * @param headers the message's headers (usually the message itself), asked for only by headers exchanges
     */
    public ArrayList<String> route(BindingTable table, Function<String, Exchange> exchanges, Exchange exchange,
            String routingKey, Headers headers) {
        return route(table, exchanges, exchange, routingKey, null, headers);
    }

    /**
     * As {@link #route(BindingTable, Function, Exchange, String, Headers)}, with more routing keys (the message's
     * CC and BCC): as in RabbitMQ, each exchange on the way matches its bindings against every key, and each queue
     * gets the message once.
     *
     * @param moreKeys null for none
     */
    public ArrayList<String> route(BindingTable table, Function<String, Exchange> exchanges, Exchange exchange,
            String routingKey, List<String> moreKeys, Headers headers) {
        queues.clear();
        visited.clear();
        this.moreKeys = moreKeys;
        try {
            routeFrom(table, exchanges, exchange, routingKey == null ? "" : routingKey, headers);
        } finally {
            this.moreKeys = null;
            if (this.headers != null) { // the message is not kept past the call
                this.headers = null;
                this.headerValues = null;
            }
        }
        return queues;
    }

    private void routeFrom(BindingTable table, Function<String, Exchange> exchanges, Exchange exchange, String key,
            Headers headers) {
        if (visited.contains(exchange.name())) {
            return;
        }
        visited.add(exchange.name());
        int before = queues.size();
        if (exchange.isDefault()) {
            addQueue(key);
            if (moreKeys != null) {
                moreKeys.forEach(this::addQueue);
            }
        } else {
            SourceBindings bindings = table.of(exchange.name());
            switch (exchange.type()) {
                case FANOUT -> {
                    forCallbacks(table, exchanges, key, headers);
                    bindings.destinations.forEachKey(deliverTo);
                }
                case DIRECT -> {
                    direct(table, exchanges, bindings, key, key, headers);
                    if (moreKeys != null) {
                        for (int i = 0; i < moreKeys.size(); i++) {
                            direct(table, exchanges, bindings, moreKeys.get(i), key, headers);
                        }
                    }
                }
                case TOPIC -> {
                    if (!bindings.isEmpty()) {
                        forCallbacks(table, exchanges, key, headers);
                        TopicTrie trie = bindings.trie();
                        trie.match(key, deliverTo);
                        if (moreKeys != null) {
                            for (int i = 0; i < moreKeys.size(); i++) {
                                trie.match(moreKeys.get(i), deliverTo);
                            }
                        }
                    }
                }
                case LOCAL_RANDOM -> {
                    int count = bindings.destinations.size();
                    if (count > 0) {
                        Destination chosen = localQueue == null
                            ? bindings.destinations.keyAt(count == 1 ? 0 : ThreadLocalRandom.current().nextInt(count))
                            : pickLocal(bindings, count);
                        if (chosen != null) {
                            deliver(table, exchanges, chosen, key, headers);
                        }
                    }
                }
                case HEADERS -> {
                    if (!bindings.isEmpty()) {
                        forCallbacks(table, exchanges, key, headers);
                        if (headerValues == null) {
                            headerValues = headers.headers();
                        }
                        bindings.bindings.forEachKey(matchHeaders);
                    }
                }
                default -> throw new IllegalStateException(exchange.type().toString());
            }
        }
        if (queues.size() == before) {
            String alternate = exchange.alternateInForce();
            Exchange ae = alternate == null ? null : exchanges.apply(alternate);
            if (ae != null) {
                routeFrom(table, exchanges, ae, key, headers);
            }
        }
    }

    /** Sets what the callbacks read, storing only what changed. */
    private void forCallbacks(BindingTable table, Function<String, Exchange> exchanges, String key, Headers headers) {
        if (this.table != table) {
            this.table = table;
        }
        if (this.exchanges != exchanges) {
            this.exchanges = exchanges;
        }
        if (this.key != key) {
            this.key = key;
        }
        if (this.headers != headers) {
            this.headers = headers;
        }
    }

    /** The destinations a direct exchange binds with {@code match}; the message goes on with its own {@code key}. */
    private void direct(BindingTable table, Function<String, Exchange> exchanges, SourceBindings bindings,
            String match, String key, Headers headers) {
        Destination[] matched = bindings.byKey.getString(match);
        if (matched != null) {
            for (Destination d : matched) {
                deliver(table, exchanges, d, key, headers);
            }
        }
    }

    private void deliverFromFields(Destination destination) {
        deliver(table, exchanges, destination, key, headers);
    }

    private void matchHeaders(Binding binding) {
        if (headersMatch(binding.arguments(), headerValues)) {
            deliver(table, exchanges, binding.destination(), key, headers);
        }
    }

    /**
     * One of the bound queues on this node, at random, or null when none is (RabbitMQ's
     * {@code rabbit_exchange_type_local_random}): one pass that keeps each local one with probability 1/seen, so
     * nothing is allocated.
     */
    private Destination pickLocal(SourceBindings bindings, int count) {
        Destination chosen = null;
        int seen = 0;
        for (int i = 0; i < count; i++) {
            Destination d = bindings.destinations.keyAt(i);
            if (d.isExchange() || localQueue.test(d.name())) {
                seen++;
                if (seen == 1 || ThreadLocalRandom.current().nextInt(seen) == 0) {
                    chosen = d;
                }
            }
        }
        return chosen;
    }

    /**
     * Which queues are this node's, for {@code x-local-random}: null when all of them are (a single node). Set by
     * the virtual host routing on this router, before each route; stored only when it changes.
     */
    public void localQueues(Predicate<String> isLocal) {
        if (localQueue != isLocal) {
            localQueue = isLocal;
        }
    }

    private void deliver(BindingTable table, Function<String, Exchange> exchanges, Destination destination,
            String key, Headers headers) {
        if (!destination.isExchange()) {
            addQueue(destination.name());
            return;
        }
        Exchange next = exchanges.apply(destination.name());
        if (next != null) {
            routeFrom(table, exchanges, next, key, headers);
        }
    }

    private void addQueue(String name) {
        if (!queues.contains(name)) {
            queues.add(name);
        }
    }

    /**
     * RabbitMQ's headers matching: {@code x-match} = {@code all} (default), {@code any}, {@code all-with-x} or
     * {@code any-with-x}; arguments starting {@code x-} take part only in the {@code -with-x} forms. Values compare
     * in the neutral model of {@link HeaderValues} with their types (a long 1 is not an int 1; an AMQP 1.0 uint
     * and a 0-9-1 unsigned int are both longs); a null value asks only that the header be present.
     *
     * @param arguments the binding's arguments, as the management node decoded them (proton-j types); normalised
     *        here, one value at a time, so strings (the usual case) cost nothing
     * @param headers the message's headers, already neutral
     */
    static boolean headersMatch(Map<String, Object> arguments, Map<String, Object> headers) {
        // any value but these three is all, as in rabbit_exchange_type_headers:route/3 (HeadersBindingCheck refuses
        // them when bound; a binding saved before that check existed may still hold one)
        Object mode = HeaderValues.normalise(arguments.get("x-match"));
        boolean any = "any".equals(mode) || "any-with-x".equals(mode);
        boolean withX = "all-with-x".equals(mode) || "any-with-x".equals(mode);
        for (Map.Entry<String, Object> e : arguments.entrySet()) {
            String name = e.getKey();
            if (name.equals("x-match") || !withX && name.startsWith("x-")) {
                continue;
            }
            boolean matches = headers.containsKey(name)
                && (e.getValue() == null || Objects.equals(HeaderValues.normalise(e.getValue()), headers.get(name)));
            if (any && matches) {
                return true;
            }
            if (!any && !matches) {
                return false;
            }
        }
        return !any;
    }
}
