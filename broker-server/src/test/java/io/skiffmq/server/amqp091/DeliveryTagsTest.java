package io.skiffmq.server.amqp091;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.queue.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Channel delivery tags to per-consumer queue tags, settled one by one or as RabbitMQ's multiple acks. */
class DeliveryTagsTest {
    private final DeliveryTags tags = new DeliveryTags();
    private final List<String> settled = new ArrayList<>();

    private DeliveryTags.Source source(String name) {
        return new DeliveryTags.Source() {
            @Override
            public void settle(long first, long last, Outcome outcome, int count) {
                settled.add(name + " " + first + ".." + last + " " + outcome.kind() + " x" + count);
            }

            @Override
            public io.skiffmq.core.queue.Queue queue() {
                throw new UnsupportedOperationException("no queue behind " + name);
            }
        };
    }

    @Test
    void aMultipleAckSettlesOneRangePerConsumer() throws Exception {
        DeliveryTags.Source a = source("a");
        DeliveryTags.Source b = source("b");
        for (int i = 0; i < 3; i++) {
            assertThat(tags.add(a, i, 0)).isEqualTo(2 * i + 1);
            assertThat(tags.add(b, i, 0)).isEqualTo(2 * i + 2);
        }
        tags.settle(3, false, Outcome.ACCEPTED); // a's queue tag 1
        tags.settle(5, true, Outcome.ACCEPTED);
        assertThat(settled).containsExactly("a 1..1 ACCEPTED x1", "a 0..2 ACCEPTED x2", "b 0..1 ACCEPTED x2");
        assertThat(tags.outstanding()).isEqualTo(1);
        assertThatThrownBy(() -> tags.settle(5, false, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class).hasMessage("unknown delivery tag 5");
        tags.settle(0, true, Outcome.RELEASED);
        assertThat(settled).last().isEqualTo("b 2..2 RELEASED x1");
        assertThat(tags.outstanding()).isZero();
    }

    @Test
    void preSettledDeliveriesTakeTagsButCannotBeAcked() throws Exception {
        DeliveryTags.Source a = source("a");
        assertThat(tags.add(null, 0, 0)).isEqualTo(1);
        assertThat(tags.add(a, 0, 0)).isEqualTo(2);
        assertThat(tags.add(null, 0, 0)).isEqualTo(3);
        assertThatThrownBy(() -> tags.settle(1, false, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class);
        assertThatThrownBy(() -> tags.settle(3, true, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class);
        tags.settle(2, false, Outcome.ACCEPTED);
        assertThat(tags.outstanding()).isZero();
        assertThat(tags.add(a, 1, 0)).isEqualTo(4);
        assertThat(tags.isOutstanding(4)).isTrue();
    }

    @Test
    void thousandsOutstandingGrowTheRing() throws Exception {
        DeliveryTags.Source a = source("a");
        for (int i = 0; i < 5000; i++) {
            tags.add(a, i, 0);
        }
        tags.settle(4000, true, Outcome.ACCEPTED);
        assertThat(settled).containsExactly("a 0..3999 ACCEPTED x4000");
        assertThat(tags.outstanding()).isEqualTo(1000);
        tags.settleAll(Outcome.RELEASED);
        assertThat(settled).last().isEqualTo("a 4000..4999 RELEASED x1000");
    }

    @Test
    void heldTagsAreNoLongerOutstandingUntilTheRollback() throws Exception {
        DeliveryTags.Source a = source("a");
        for (int i = 0; i < 4; i++) {
            tags.add(a, i, 0);
        }
        tags.hold(2, false, Outcome.ACCEPTED);
        assertThat(tags.outstanding()).isEqualTo(3);
        assertThatThrownBy(() -> tags.hold(2, false, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class).hasMessage("unknown delivery tag 2");
        assertThatThrownBy(() -> tags.settle(2, true, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class);
        tags.hold(3, true, Outcome.REJECTED); // 1 and 3
        assertThat(tags.outstanding()).isEqualTo(1);
        tags.settleAll(Outcome.RELEASED); // basic.recover: 4 only
        assertThat(settled).containsExactly("a 3..3 RELEASED x1");
        tags.unholdAll();
        assertThat(tags.outstanding()).isEqualTo(3);
        tags.settle(3, true, Outcome.ACCEPTED);
        assertThat(settled).last().isEqualTo("a 0..2 ACCEPTED x3");
        assertThat(tags.outstanding()).isZero();
    }

    @Test
    void aCommitSettlesRangesThatSkipWhatIsNotHeldAndSplitByOutcome() throws Exception {
        DeliveryTags.Source a = source("a");
        DeliveryTags.Source b = source("b");
        for (int i = 0; i < 5; i++) {
            tags.add(a, i, 0); // tags 1, 3, 5, 7, 9
            tags.add(b, i, 0); // tags 2, 4, 6, 8, 10
        }
        tags.hold(1, false, Outcome.ACCEPTED);
        tags.hold(3, false, Outcome.ACCEPTED);
        tags.hold(7, false, Outcome.ACCEPTED); // a's queue tag 2 (tag 5) stays unacked
        tags.hold(9, false, Outcome.REJECTED);
        for (int tag = 2; tag <= 10; tag += 2) {
            tags.hold(tag, false, Outcome.ACCEPTED); // every tag of b
        }
        tags.settleHeld();
        assertThat(settled).containsExactly("a 0..1 ACCEPTED x2", "b 0..4 ACCEPTED x5", "a 3..3 ACCEPTED x1",
            "a 4..4 REJECTED x1");
        assertThat(tags.outstanding()).isEqualTo(1);
        assertThat(tags.isOutstanding(5)).isTrue();
        tags.settleHeld(); // nothing held any more
        assertThat(settled).hasSize(4);
    }

    @Test
    void holdingAllWithTagZeroTakesEveryOutstandingTag() throws Exception {
        DeliveryTags.Source a = source("a");
        for (int i = 0; i < 3; i++) {
            tags.add(a, i, 0);
        }
        tags.hold(2, false, Outcome.REJECTED);
        tags.hold(0, true, Outcome.ACCEPTED);
        assertThat(tags.outstanding()).isZero();
        tags.settleHeld();
        assertThat(settled).containsExactly("a 0..0 ACCEPTED x1", "a 1..1 REJECTED x1", "a 2..2 ACCEPTED x1");
    }

    /** The consumer timeout looks at the oldest delivery the client may still settle: not pre-settled, not held. */
    @Test
    void theOldestIsTheFirstOutstandingDeliveryWithWhenItWasDelivered() throws Exception {
        DeliveryTags.Source a = source("a");
        assertThat(tags.oldest()).isEqualTo(-1);
        tags.add(null, 0, 100); // no-ack: nothing to wait for
        tags.add(a, 0, 200);
        tags.add(a, 1, 300);
        tags.add(a, 2, 400);
        assertThat(tags.oldest()).isEqualTo(2);
        assertThat(tags.deliveredAt(2)).isEqualTo(200);
        assertThat(tags.source(2)).isSameAs(a);
        tags.hold(2, false, Outcome.ACCEPTED); // in a transaction: no longer the client's to settle
        assertThat(tags.oldest()).isEqualTo(3);
        assertThat(tags.deliveredAt(3)).isEqualTo(300);
        tags.settle(3, true, Outcome.ACCEPTED);
        assertThat(tags.oldest()).isEqualTo(4);
        assertThat(tags.deliveredAt(4)).isEqualTo(400);
        tags.settle(4, false, Outcome.ACCEPTED);
        assertThat(tags.oldest()).isEqualTo(-1);
        assertThatThrownBy(() -> tags.deliveredAt(4)).isInstanceOf(IllegalArgumentException.class);
    }
}
