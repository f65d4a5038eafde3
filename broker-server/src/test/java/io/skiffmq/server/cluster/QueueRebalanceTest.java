package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * rebalance over queue groups ({@link QueueRebalance#balance}): a group led elsewhere goes back to its preferred
 * leader (its first member) when that runs; among the groups whose preferred member does not run, a node leading more
 * than its share hands one to the member leading fewest, when that leaves them less apart; a group moves once at
 * most; a failed handover is skipped; a group led by its preferred member, or holding every queue, stays where it is.
 */
class QueueRebalanceTest {
    private static final List<String> NODES = List.of("a", "b", "c");

    private static QueueRebalance.LedGroup group(String leader, int queues, String... members) {
        return new QueueRebalance.LedGroup(List.of(members), leader, queues);
    }

    @Test
    void aGroupLedAwayFromItsRunningPreferredMemberGoesBack() {
        List<String> moves = new ArrayList<>();
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("b", 1, "a", "b"), group("b", 1, "b", "c"),
            group("c", 1, "c", "a")), NODES, (members, to) -> moves.add(members + "->" + to));
        assertThat(moves).containsExactly("[a, b]->a");
        assertThat(led).isEqualTo(Map.of("a", 1, "b", 1, "c", 1));

        assertThat(QueueRebalance.balance(List.of(group("a", 5, "a", "b", "c"), group("a", 2, "a", "b"),
            group("a", 1, "a", "c")), NODES, (members, to) -> {
                throw new AssertionError("moved a group from its preferred member, whose vote refuses that");
            })).isEqualTo(Map.of("a", 8));
    }

    @Test
    void withThePreferredMembersDownTheGroupOfFewestQueuesMovesAndOnlyWhenThatNarrowsTheGap() {
        List<String> running = List.of("a", "b", "c");
        List<String> moves = new ArrayList<>();
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("a", 5, "d", "a", "b", "c"),
            group("a", 2, "d", "a", "b"), group("a", 1, "d", "a", "c")), running,
            (members, to) -> moves.add(members + "->" + to));
        assertThat(moves).containsExactly("[d, a, c]->c", "[d, a, b]->b");
        assertThat(led).isEqualTo(Map.of("a", 5, "b", 2, "c", 1));

        assertThat(QueueRebalance.balance(List.of(group("a", 9, "d", "a", "b", "c")), running, (members, to) -> {
            throw new AssertionError("moved a group holding every queue");
        })).isEqualTo(Map.of("a", 9));
    }

    @Test
    void aFailedHandoverIsSkippedAndANodeNotRunningGetsNone() {
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("a", 1, "c", "a", "b"),
            group("a", 1, "c", "a"), group("a", 1, "c", "a", "b")), List.of("a", "b"), (members, to) -> {
                if (members.size() == 2) {
                    throw new IOException("no");
                }
            });
        assertThat(led).isEqualTo(Map.of("a", 2, "b", 1));

        Map<String, Integer> back = QueueRebalance.balance(List.of(group("b", 1, "a", "b"), group("b", 1, "a", "c")),
            NODES, (members, to) -> {
                if (members.contains("c")) {
                    throw new IOException("no");
                }
            });
        assertThat(back).isEqualTo(Map.of("a", 1, "b", 1));
    }
}
