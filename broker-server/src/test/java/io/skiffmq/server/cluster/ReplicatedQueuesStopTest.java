package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A node that stops while its queue groups still apply entries: what their apply threads hand on is dropped once the
 * replicated queues are closed. A rejection thrown back into Ratis' state machine updater left that thread spinning
 * and the node's stop waiting for it for good (seen when a node was stopped as it started, during a leader entry).
 */
class ReplicatedQueuesStopTest {
    @Test
    void entriesAppliedAfterCloseAreTakenWithoutThrowing() {
        ReplicatedQueues queues = new ReplicatedQueues(Duration.ofSeconds(1));
        queues.close();
        assertThatCode(() -> {
            queues.leader("g", "n1@127.0.0.1", 7, false);
            queues.leader("g", "n0@127.0.0.1", 9, true);
            queues.notLeader("g");
        }).doesNotThrowAnyException();
    }
}
