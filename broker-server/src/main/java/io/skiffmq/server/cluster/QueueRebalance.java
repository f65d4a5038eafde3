package io.skiffmq.server.cluster;

import io.skiffmq.cluster.ClusterNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * rabbitmq-queues' {@code rebalance} (rabbit_amqqueue:rebalance/3) over queue groups: quorum queues share their group
 * and its leader (docs/quorum-queues.md, "How it is replicated"), so what moves is a group's leadership, with every
 * queue of it. A group has a preferred leader, its first member ("Where leaders go"), which Ratis' priorities give
 * the leadership back to whenever it runs, and whose vote refuses any other candidate while it does: first, each group
 * led elsewhere goes back to its preferred member when that runs. Then, among the groups whose preferred member does
 * not run, each running node should lead at most its share of the queues chosen (the total over the running nodes,
 * rounded up); while a node leads more, one of those groups (the one of fewest queues not moved yet) is handed to the
 * member of it that leads fewest, when that leaves the two less apart. Each group moves once at most, as RabbitMQ
 * moves each queue once. Stateless; one run blocks its caller.
 */
public final class QueueRebalance {
    private static final System.Logger LOG = System.getLogger(QueueRebalance.class.getName());

    /** Hands a group's leadership to a member; throws when it did not. */
    interface Transfer {
        void to(List<String> members, String node) throws IOException;
    }

    /** A queue group as rebalance sees it: its members, its leader (or null), its queues chosen. */
    record LedGroup(List<String> members, String leader, int queues) {
    }

    private final ReplicatedQueues queues;
    private final ClusterNode cluster;

    QueueRebalance(ReplicatedQueues queues, ClusterNode cluster) {
        this.queues = queues;
        this.cluster = cluster;
    }

    /**
     * Rebalances the groups of the replicated queues whose virtual host and name {@code chosen} picks.
     *
     * @return each node leading some of them afterwards, by name, and how many it leads
     */
    public Map<String, Integer> run(java.util.function.BiPredicate<String, String> chosen) {
        Predicate<QueueCommands.Key> picked = key -> chosen.test(key.vhost(), key.name());
        // the running nodes asked for (up to two seconds); a leadership handed over blocks, up to the append timeout
        return balance(queues.ledGroups(picked), cluster.status().running(), cluster::transferQueueGroupLeader);
    }

    /** The algorithm, on {@code led} as known now, the {@code running} nodes, moving leaders by {@code transfer}. */
    static Map<String, Integer> balance(List<LedGroup> led, List<String> running, Transfer transfer) {
        List<LedGroup> groups = new ArrayList<>(led);
        Map<String, Integer> counts = new TreeMap<>();
        int total = 0;
        for (LedGroup group : groups) {
            total += group.queues();
            if (group.leader() != null) {
                counts.merge(group.leader(), group.queues(), Integer::sum);
            }
        }
        int most = running.isEmpty() ? total : (total + running.size() - 1) / running.size();
        Set<List<String>> moved = new HashSet<>();
        for (LedGroup group : new ArrayList<>(groups)) {
            String preferred = group.members().get(0);
            if (group.leader() != null && !group.leader().equals(preferred) && running.contains(preferred)) {
                moved.add(group.members());
                move(groups, group, preferred, counts, transfer);
            }
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (String node : new ArrayList<>(counts.keySet())) {
                if (counts.get(node) <= most) {
                    continue;
                }
                LedGroup group = groups.stream()
                    .filter(g -> node.equals(g.leader()) && !moved.contains(g.members())
                        && !running.contains(g.members().get(0)))
                    .min(Comparator.comparingInt(LedGroup::queues)).orElse(null);
                if (group == null) {
                    continue;
                }
                moved.add(group.members());
                changed = true;
                String to = group.members().stream().filter(m -> !m.equals(node) && running.contains(m))
                    .min(Comparator.comparingInt((String m) -> counts.getOrDefault(m, 0)).thenComparing(m -> m))
                    .orElse(null);
                if (to == null || counts.getOrDefault(to, 0) + group.queues() >= counts.get(node)) {
                    continue;
                }
                move(groups, group, to, counts, transfer);
            }
        }
        Map<String, Integer> out = new LinkedHashMap<>();
        counts.forEach((node, n) -> {
            if (n > 0) {
                out.put(node, n);
            }
        });
        return out;
    }

    /** Hands {@code group}'s leadership to {@code to}, and counts it there; a failed handover is logged and skipped. */
    private static void move(List<LedGroup> groups, LedGroup group, String to, Map<String, Integer> counts,
            Transfer transfer) {
        String from = group.leader();
        try {
            transfer.to(group.members(), to);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rebalance: queue group " + group.members()
                + " could not move its leader from " + from + " to " + to, e);
            return;
        }
        LOG.log(System.Logger.Level.INFO, "rebalance: the leader of {0} quorum queues (group {1}) moved from {2} to"
            + " {3}", group.queues(), group.members(), from, to);
        counts.merge(from, -group.queues(), Integer::sum);
        counts.merge(to, group.queues(), Integer::sum);
        groups.set(groups.indexOf(group), new LedGroup(group.members(), to, group.queues()));
    }
}
