package io.skiffmq.server.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Confirmed ranges from several links are kept in order and joined where they touch. */
class PublisherDispositionsTest {
    private final PublisherDispositions dispositions = new PublisherDispositions(null);

    @Test
    void rangesAreKeptInOrderAndJoined() {
        dispositions.accepted(10, 12);
        dispositions.accepted(13, 15);
        assertThat(dispositions.pending()).isEqualTo("10..15");
        dispositions.accepted(20, 20);
        dispositions.accepted(3, 4);
        assertThat(dispositions.pending()).isEqualTo("3..4 10..15 20..20");
        dispositions.accepted(16, 19);
        assertThat(dispositions.pending()).as("joins both neighbours").isEqualTo("3..4 10..20");
        dispositions.accepted(5, 9);
        assertThat(dispositions.pending()).isEqualTo("3..20");
        dispositions.accepted(1, 1);
        assertThat(dispositions.pending()).isEqualTo("1..1 3..20");
        for (long id = 100; id < 200; id += 2) {
            dispositions.accepted(id, id);
        }
        assertThat(dispositions.pending().split(" ")).hasSize(52);
        dispositions.clear();
        assertThat(dispositions.pending()).isEmpty();
    }
}
