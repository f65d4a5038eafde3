package io.skiffmq.core;

import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.message.Headers;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.BindingTable;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.routing.Router;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A virtual host: queues, exchanges and the bindings between them. The default exchange ({@code ""}) and
 * {@code amq.direct}, {@code amq.fanout}, {@code amq.topic} and {@code amq.headers} exist from the start and cannot
 * be deleted or redeclared differently; names starting {@code amq.} are reserved.
 *
 * <p>Durable exchanges and queues, and bindings between durable ends, are kept by the {@link VirtualHostStore}:
 * every change to them is handed to it under the write lock and is durable when the call returns.
 *
 * <p>Thread-safe. Queues and exchanges are in concurrent maps. The bindings are an immutable {@link BindingTable}
 * behind one volatile reference: changes (serialised on {@link #writeLock}) build a new snapshot and swap it in,
 * and routing reads whichever snapshot is current without locking.
 */
public final class VirtualHost {
    private final String name;
    private final Supplier<QueueExecutor> executors;
    private final VirtualHostStore store;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();
    private final Map<String, Exchange> exchanges = new ConcurrentHashMap<>();
    private final Object writeLock = new Object();
    private volatile BindingTable bindings = BindingTable.EMPTY;
    private final java.util.function.Function<String, Exchange> exchangeLookup = exchanges::get;

    /** A virtual host that keeps nothing across restarts. */
    public VirtualHost(String name, Supplier<QueueExecutor> executors) {
        this(name, executors, VirtualHostStore.TRANSIENT);
    }

    /** @param executors hands out the executor each new queue will live on (e.g. event loops in turn) */
    public VirtualHost(String name, Supplier<QueueExecutor> executors, VirtualHostStore store) {
        this.name = name;
        this.executors = executors;
        this.store = store;
        for (Exchange e : List.of(new Exchange("", Exchange.Type.DIRECT),
                new Exchange("amq.direct", Exchange.Type.DIRECT), new Exchange("amq.fanout", Exchange.Type.FANOUT),
                new Exchange("amq.topic", Exchange.Type.TOPIC), new Exchange("amq.headers", Exchange.Type.HEADERS))) {
            exchanges.put(e.name(), e);
        }
    }

    public String name() {
        return name;
    }

    // ---- queues -------------------------------------------------------------------------------------------

    /** The queue, or null. */
    public Queue queue(String queueName) {
        return queues.get(queueName);
    }

    /** Every queue, in no particular order. */
    public java.util.Collection<Queue> queues() {
        return java.util.Collections.unmodifiableCollection(queues.values());
    }

    /** The queue, or a new durable classic queue without arguments when there is none. */
    public Queue declareQueue(String queueName) {
        Queue queue = queues.get(queueName);
        return queue != null ? queue : declare(queueName, true, Map.of(), false);
    }

    /**
     * Declares a queue, or returns the existing one when it is equivalent.
     *
     * @throws BrokerException PRECONDITION_FAILED when one of that name differs in durability or arguments
     */
    public Queue declareQueue(String queueName, boolean durable, Map<String, Object> arguments) {
        return declare(queueName, durable, arguments, true);
    }

    private Queue declare(String queueName, boolean durable, Map<String, Object> arguments, boolean equivalent) {
        synchronized (writeLock) {
            Queue existing = queues.get(queueName);
            if (existing != null) {
                if (equivalent && (existing.durable() != durable || !existing.arguments().equals(arguments))) {
                    throw new BrokerException(Kind.PRECONDITION_FAILED, "queue '" + queueName + "' exists with "
                        + (existing.durable() ? "durable" : "transient") + " and arguments " + existing.arguments());
                }
                return existing;
            }
            Queue queue = store.createQueue(queueName, durable, arguments, executors.get());
            if (durable) {
                // durable before anyone can route to it: a message confirmed into it must find it after a crash
                try {
                    store.definitionsChanged(this, queue);
                } catch (RuntimeException e) {
                    queue.delete();
                    throw e;
                }
            }
            queues.put(queueName, queue);
            return queue;
        }
    }

    /** Deletes the queue and its bindings; false when there was none. Messages in it are dropped. */
    public boolean deleteQueue(String queueName) {
        Queue queue;
        synchronized (writeLock) {
            queue = queues.remove(queueName);
            if (queue != null) {
                replaceBindings(bindings.withoutDestination(Destination.queue(queueName)));
                if (queue.durable()) {
                    store.definitionsChanged(this, null);
                }
            }
        }
        if (queue != null) {
            queue.delete();
        }
        return queue != null;
    }

    // ---- exchanges ----------------------------------------------------------------------------------------

    /** Every exchange, the predeclared ones included, in no particular order. */
    public java.util.Collection<Exchange> exchanges() {
        return java.util.Collections.unmodifiableCollection(exchanges.values());
    }

    /** The exchange, or null. */
    public Exchange exchange(String exchangeName) {
        return exchanges.get(exchangeName);
    }

    /**
     * Declares an exchange, or returns the existing one when it is equivalent.
     *
     * @throws BrokerException PRECONDITION_FAILED when one of that name differs, ACCESS_REFUSED for {@code amq.*}
     */
    public Exchange declareExchange(Exchange exchange) {
        synchronized (writeLock) {
            Exchange existing = exchanges.get(exchange.name());
            if (existing != null) {
                if (!existing.equals(exchange)) {
                    throw new BrokerException(Kind.PRECONDITION_FAILED, "exchange '" + exchange.name()
                        + "' exists with different properties: " + existing);
                }
                return existing;
            }
            if (exchange.name().startsWith("amq.")) {
                throw new BrokerException(Kind.ACCESS_REFUSED, "exchange names starting 'amq.' are reserved");
            }
            exchanges.put(exchange.name(), exchange);
            if (exchange.durable()) {
                store.definitionsChanged(this, null);
            }
            return exchange;
        }
    }

    /**
     * Deletes an exchange and every binding from or to it (as RabbitMQ does: exchanges bound to it lose that
     * binding, and keep their others). False when there was none.
     */
    public boolean deleteExchange(String exchangeName) {
        if (exchangeName.isEmpty() || exchangeName.startsWith("amq.")) {
            throw new BrokerException(Kind.ACCESS_REFUSED, "exchange '" + exchangeName + "' cannot be deleted");
        }
        synchronized (writeLock) {
            Exchange removed = exchanges.remove(exchangeName);
            if (removed == null) {
                return false;
            }
            replaceBindings(bindings.withoutSource(exchangeName).withoutDestination(Destination.exchange(exchangeName)));
            if (removed.durable()) {
                store.definitionsChanged(this, null);
            }
            return true;
        }
    }

    // ---- bindings -----------------------------------------------------------------------------------------

    public BindingTable bindings() {
        return bindings;
    }

    /**
     * Adds a binding (a second identical one is no change).
     *
     * @throws BrokerException NOT_FOUND for a missing source or destination, ACCESS_REFUSED for the default exchange
     */
    public void bind(Binding binding) {
        synchronized (writeLock) {
            checkBindable(binding);
            if (!bindings.contains(binding)) {
                replaceBindings(bindings.with(binding));
                if (durable(binding)) {
                    store.definitionsChanged(this, null);
                }
            }
        }
    }

    /** Removes a binding; false when there was no such binding (arguments included). */
    public boolean unbind(Binding binding) {
        synchronized (writeLock) {
            if (!bindings.contains(binding)) {
                return false;
            }
            boolean durable = durable(binding); // before an auto-delete source goes with it
            replaceBindings(bindings.without(binding));
            if (durable) {
                store.definitionsChanged(this, null);
            }
            return true;
        }
    }

    /** A binding survives a restart when both its ends do (as in RabbitMQ). */
    public boolean durable(Binding binding) {
        Exchange source = exchanges.get(binding.source());
        Destination d = binding.destination();
        boolean destination;
        if (d.isExchange()) {
            Exchange e = exchanges.get(d.name());
            destination = e != null && e.durable();
        } else {
            Queue q = queues.get(d.name());
            destination = q != null && q.durable();
        }
        return source != null && source.durable() && destination;
    }

    private void checkBindable(Binding binding) {
        if (binding.source().isEmpty() || binding.destination().isExchange() && binding.destination().name().isEmpty()) {
            throw new BrokerException(Kind.ACCESS_REFUSED, "the default exchange cannot be bound");
        }
        if (!exchanges.containsKey(binding.source())) {
            throw new BrokerException(Kind.NOT_FOUND, "no exchange '" + binding.source() + "'");
        }
        Destination d = binding.destination();
        boolean exists = d.isExchange() ? exchanges.containsKey(d.name()) : queues.containsKey(d.name());
        if (!exists) {
            throw new BrokerException(Kind.NOT_FOUND, "no " + (d.isExchange() ? "exchange '" : "queue '") + d.name() + "'");
        }
    }

    /** Swaps in a new snapshot, deleting auto-delete exchanges left without bindings. Holds the write lock. */
    private void replaceBindings(BindingTable table) {
        BindingTable previous = bindings;
        BindingTable next = table;
        for (Exchange e : exchanges.values()) {
            if (e.autoDelete() && !previous.bindingsFrom(e.name()).isEmpty() && next.bindingsFrom(e.name()).isEmpty()) {
                exchanges.remove(e.name());
                next = next.withoutDestination(Destination.exchange(e.name()));
            }
        }
        bindings = next;
    }

    // ---- routing ------------------------------------------------------------------------------------------

    /**
     * The queues a message published to {@code exchange} with {@code routingKey} goes to, added to {@code out}
     * (cleared first). {@code router} is the calling thread's own.
     *
     * @param headers the message's headers (the message itself), asked for only when a headers exchange is on
     *        the way
     */
    public List<Queue> route(Exchange exchange, String routingKey, Headers headers,
            Router router, List<Queue> out) {
        out.clear();
        ArrayList<String> names = router.route(bindings, exchangeLookup, exchange, routingKey, headers);
        for (int i = 0; i < names.size(); i++) {
            Queue queue = queues.get(names.get(i));
            if (queue != null) {
                out.add(queue);
            }
        }
        return out;
    }
}
