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
        return (first, last, outcome, count) -> settled.add(name + " " + first + ".." + last + " " + outcome.kind()
            + " x" + count);
    }

    @Test
    void aMultipleAckSettlesOneRangePerConsumer() throws Exception {
        DeliveryTags.Source a = source("a");
        DeliveryTags.Source b = source("b");
        for (int i = 0; i < 3; i++) {
            assertThat(tags.add(a, i)).isEqualTo(2 * i + 1);
            assertThat(tags.add(b, i)).isEqualTo(2 * i + 2);
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
        assertThat(tags.add(null, 0)).isEqualTo(1);
        assertThat(tags.add(a, 0)).isEqualTo(2);
        assertThat(tags.add(null, 0)).isEqualTo(3);
        assertThatThrownBy(() -> tags.settle(1, false, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class);
        assertThatThrownBy(() -> tags.settle(3, true, Outcome.ACCEPTED))
            .isInstanceOf(DeliveryTags.UnknownTagException.class);
        tags.settle(2, false, Outcome.ACCEPTED);
        assertThat(tags.outstanding()).isZero();
        assertThat(tags.add(a, 1)).isEqualTo(4);
        assertThat(tags.isOutstanding(4)).isTrue();
    }

    @Test
    void thousandsOutstandingGrowTheRing() throws Exception {
        DeliveryTags.Source a = source("a");
        for (int i = 0; i < 5000; i++) {
            tags.add(a, i);
        }
        tags.settle(4000, true, Outcome.ACCEPTED);
        assertThat(settled).containsExactly("a 0..3999 ACCEPTED x4000");
        assertThat(tags.outstanding()).isEqualTo(1000);
        tags.settleAll(Outcome.RELEASED);
        assertThat(settled).last().isEqualTo("a 4000..4999 RELEASED x1000");
    }
}
