package io.skiffmq.core.routing;

import io.skiffmq.core.Exchange;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * What removing bindings takes with it, as {@code rabbit_binding} cascades: an auto-delete exchange left without
 * bindings as a source goes, which removes the bindings to it, which may leave another without its last, and so on.
 * Only the sources of removed bindings can have lost their last, so only they are looked at: the cost follows what
 * was removed, not the number of exchanges. Immutable.
 *
 * @param table the bindings left, without those to the exchanges that go
 * @param gone the auto-delete exchanges that go, in the order found
 * @param removed every binding removed: the first ones and those to the exchanges that go
 */
public record AutoDeleteCascade(BindingTable table, List<Exchange> gone, Collection<Binding> removed) {
    /**
     * @param table the current bindings without {@code removed}
     * @param exchanges the exchanges by name
     * @param which the exchanges that may go (others stay, however unbound)
     */
    public static AutoDeleteCascade of(BindingTable table, Collection<Binding> removed,
            Function<String, Exchange> exchanges, Predicate<Exchange> which) {
        BindingTable next = table;
        List<Exchange> gone = new ArrayList<>(0);
        List<Binding> all = new ArrayList<>(removed);
        ArrayDeque<Binding> left = new ArrayDeque<>(removed);
        while (!left.isEmpty()) {
            Exchange e = exchanges.apply(left.poll().source());
            if (e != null && e.autoDelete() && which.test(e) && !gone.contains(e) && !next.hasBindingsFrom(e.name())) {
                gone.add(e);
                Destination to = Destination.exchange(e.name());
                Collection<Binding> unbound = next.bindingsTo(to);
                left.addAll(unbound);
                all.addAll(unbound);
                next = next.withoutDestination(to);
            }
        }
        return new AutoDeleteCascade(next, gone, all);
    }
}
