package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * rebalance over queue groups ({@link QueueRebalance#balance}): a node leading more than its share hands a group to
 * the member leading fewest, when that leaves them less apart; a group moves once at most; a failed handover is
 * skipped; a group holding every queue stays where it is.
 */
class QueueRebalanceTest {
    private static final List<String> NODES = List.of("a", "b", "c");

    private static ReplicatedQueues.LedGroup group(String leader, int queues, String... members) {
        return new ReplicatedQueues.LedGroup(List.of(members), leader, queues);
    }

    @Test
    void aNodeLeadingTwoOfThreeGroupsHandsOneToTheNodeLeadingNone() {
        List<String> moves = new ArrayList<>();
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("b", 1, "a", "b"), group("b", 1, "b", "c"),
            group("c", 1, "a", "c")), NODES, (members, to) -> moves.add(members + "->" + to));
        assertThat(moves).containsExactly("[a, b]->a");
        assertThat(led).isEqualTo(Map.of("a", 1, "b", 1, "c", 1));
    }

    @Test
    void theGroupOfFewestQueuesMovesAndOnlyWhenThatNarrowsTheGap() {
        List<String> moves = new ArrayList<>();
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("a", 5, "a", "b", "c"),
            group("a", 2, "a", "b"), group("a", 1, "a", "c")), NODES, (members, to) -> moves.add(members + "->" + to));
        assertThat(moves).containsExactly("[a, c]->c", "[a, b]->b");
        assertThat(led).isEqualTo(Map.of("a", 5, "b", 2, "c", 1));

        assertThat(QueueRebalance.balance(List.of(group("a", 9, "a", "b", "c")), NODES, (members, to) -> {
            throw new AssertionError("moved a group holding every queue");
        })).isEqualTo(Map.of("a", 9));
    }

    @Test
    void aFailedHandoverIsSkippedAndANodeNotRunningGetsNone() {
        Map<String, Integer> led = QueueRebalance.balance(List.of(group("a", 1, "a", "b"), group("a", 1, "a", "c"),
            group("a", 1, "a", "b", "c")), List.of("a", "b"), (members, to) -> {
                if (members.size() == 2) {
                    throw new IOException("no");
                }
            });
        assertThat(led).isEqualTo(Map.of("a", 2, "b", 1));
    }
}
