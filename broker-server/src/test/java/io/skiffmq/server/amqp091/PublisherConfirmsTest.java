package io.skiffmq.server.amqp091;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Confirms become acks and nacks as RabbitMQ coalesces them. */
class PublisherConfirmsTest {
    private final PublisherConfirms confirms = new PublisherConfirms();
    private final List<String> sent = new ArrayList<>();
    private final PublisherConfirms.Acks acks = new PublisherConfirms.Acks() {
        @Override
        public void ack(long tag, boolean multiple) {
            sent.add("ack " + tag + (multiple ? " multiple" : ""));
        }

        @Override
        public void nack(long tag, boolean multiple) {
            sent.add("nack " + tag + (multiple ? " multiple" : ""));
        }
    };

    private void publish(int count) {
        for (int i = 0; i < count; i++) {
            confirms.next();
        }
    }

    @Test
    void inOrderConfirmsBecomeOneMultipleAck() {
        publish(5);
        confirms.confirmed(1, 3);
        confirms.flush(acks);
        assertThat(sent).containsExactly("ack 3 multiple");
        assertThat(confirms.unconfirmed()).isEqualTo(2);
    }

    @Test
    void confirmsPastTheLowestUnconfirmedAreAckedOneByOne() {
        publish(6);
        confirms.confirmed(4, 5);
        confirms.flush(acks);
        assertThat(sent).containsExactly("ack 4", "ack 5");
        confirms.confirmed(1, 3);
        confirms.flush(acks);
        assertThat(sent).endsWith("ack 3 multiple");
        assertThat(confirms.unconfirmed()).isEqualTo(1);
    }

    @Test
    void nacksGoOnTheirOwnAndStopTheMultipleAckBelowThem() {
        publish(6);
        confirms.confirmed(1, 2);
        confirms.refused(3, 3);
        confirms.confirmed(4, 5);
        confirms.flush(acks);
        assertThat(sent).containsExactly("nack 3", "ack 2 multiple", "ack 4", "ack 5");
        assertThat(confirms.unconfirmed()).isEqualTo(1);
    }

    @Test
    void manyOutstandingGrowTheRing() {
        publish(1000);
        confirms.confirmed(2, 1000);
        confirms.flush(acks);
        assertThat(sent).hasSize(999).first().isEqualTo("ack 2");
        sent.clear();
        confirms.confirmed(1, 1);
        confirms.flush(acks);
        assertThat(sent).containsExactly("ack 1 multiple");
        assertThat(confirms.unconfirmed()).isZero();
    }
}
