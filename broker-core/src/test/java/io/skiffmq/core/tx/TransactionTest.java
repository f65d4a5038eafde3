package io.skiffmq.core.tx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.TestMessages;
import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The protocol-neutral transaction: what it holds, the order a commit works in, confirms, refusals, rollback. */
class TransactionTest {
    private final Transaction<String> tx = new Transaction<>();
    private final List<String> published = new ArrayList<>();

    private boolean publish(Message message, boolean flag, long tag) {
        published.add(TestMessages.body(message) + "#" + tag + (flag ? "!" : ""));
        message.release();
        return true;
    }

    @Test
    void aCommitPublishesInOrderAndIsOverWhenEveryConfirmIsIn() {
        Message one = TestMessages.text("one", "q");
        tx.publish(one, false);
        tx.publish(TestMessages.text("two", "q"), true);
        tx.settle("ack-1");
        assertThat(tx.heldMessages()).isEqualTo(2);
        assertThat(tx.heldBytes()).isPositive();
        assertThat(tx.heldSettlements()).isEqualTo(1);

        tx.publishAll(this::publish);
        assertThat(published).containsExactly("one#0", "two#1!");
        assertThat(tx.heldMessages()).isZero();
        assertThat(tx.heldBytes()).isZero();
        assertThat(tx.committing()).isTrue();
        assertThat(tx.published()).isFalse();
        tx.confirmed(0, 0);
        assertThat(tx.published()).isFalse();
        tx.confirmed(1, 1);
        assertThat(tx.published()).isTrue();
        assertThat(tx.refusal()).isNull();

        List<String> applied = new ArrayList<>();
        tx.settleAll(applied::add);
        assertThat(applied).containsExactly("ack-1");
        tx.commitDone();
        assertThat(tx.committing()).isFalse();
        assertThat(one.refCnt()).isZero();
    }

    @Test
    void aRefusedMessageFailsTheCommitWithItsReason() {
        tx.publish(TestMessages.text("one", "q"), false);
        tx.publish(TestMessages.text("two", "q"), false);
        tx.publishAll(this::publish);
        tx.refused(1, 1, "queue full");
        tx.confirmed(0, 0);
        assertThat(tx.published()).isTrue();
        assertThat(tx.refusal()).isEqualTo("queue full");
    }

    @Test
    void aCommitThatPublishesNothingIsOverAtOnceAndTagsKeepRising() {
        tx.publishAll(this::publish);
        assertThat(tx.published()).isTrue();
        tx.commitDone();
        tx.publish(TestMessages.text("later", "q"), false);
        tx.publishAll((message, flag, tag) -> {
            message.release();
            published.add("tag " + tag);
            return false; // went nowhere: no confirm to wait for
        });
        assertThat(published).containsExactly("tag 0");
        assertThat(tx.published()).isTrue();
    }

    @Test
    void rollbackReleasesEachHeldMessageOnceAndUndoesTheSettlements() {
        Message one = TestMessages.text("one", "q");
        tx.publish(one, false);
        tx.settle("ack-1");
        tx.settle("ack-2");
        List<String> undone = new ArrayList<>();
        tx.rollback(undone::add);
        assertThat(one.refCnt()).isZero();
        assertThat(undone).containsExactly("ack-1", "ack-2");
        assertThat(tx.heldMessages()).isZero();
        assertThat(tx.heldSettlements()).isZero();
    }

    @Test
    void checkFindsTheFirstProblemBeforeAnythingIsPublished() {
        tx.publish(TestMessages.text("fine", "q"), false);
        tx.publish(TestMessages.text("bad", "gone"), true);
        assertThat(tx.check((message, flag) -> flag ? "no queue '" + message.routingKey() + "'" : null))
            .isEqualTo("no queue 'gone'");
        assertThat(tx.heldMessages()).isEqualTo(2);
        tx.rollback(s -> { });
    }

    @Test
    void nothingMayBeHeldWhileACommitWaitsForConfirms() {
        tx.publish(TestMessages.text("one", "q"), false);
        tx.publishAll(this::publish);
        Message late = TestMessages.text("late", "q");
        assertThatThrownBy(() -> tx.publish(late, false)).isInstanceOf(IllegalStateException.class);
        assertThat(late.refCnt()).as("released all the same").isZero();
    }
}
