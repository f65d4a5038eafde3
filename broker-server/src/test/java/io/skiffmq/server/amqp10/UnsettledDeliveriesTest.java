package io.skiffmq.server.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.core.queue.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.junit.jupiter.api.Test;

/** The session's unsettled deliveries: ranges per link, serial wrap, and memory that follows what is unsettled. */
class UnsettledDeliveriesTest {
    /** A link that records the tag ranges its queue would be told. */
    private static final class Recorder implements UnsettledDeliveries.Settler {
        final List<String> settled = new ArrayList<>();

        @Override
        public void settle(long firstTag, long lastTag, Outcome outcome) {
            settled.add(firstTag + ".." + lastTag + " " + outcome.kind());
        }
    }

    private final UnsettledDeliveries unsettled = new UnsettledDeliveries(null);

    private void dispose(long first, long last, boolean accepted) throws Exception {
        DispositionPerformative d = new DispositionPerformative().receiverRole(true).first(first).last(last)
            .settled(true).state(accepted ? Accepted.getInstance() : Released.getInstance());
        unsettled.onDisposition(d);
    }

    @Test
    void aRangeBecomesOneTagRangePerLink() throws Exception {
        Recorder a = new Recorder();
        Recorder b = new Recorder();
        for (long id = 0; id < 10; id++) {
            unsettled.add(id, id % 2 == 0 ? a : b, id / 2);
        }
        dispose(2, 7, true);
        assertThat(a.settled).containsExactly("1..3 ACCEPTED");
        assertThat(b.settled).containsExactly("1..3 ACCEPTED");
        dispose(0, 1000, false);
        assertThat(a.settled).containsExactly("1..3 ACCEPTED", "0..4 RELEASED");
        assertThat(b.settled).containsExactly("1..3 ACCEPTED", "0..4 RELEASED");
        assertThat(unsettled.size()).isZero();
        dispose(0, 1000, true);
        assertThat(a.settled).as("nothing left to settle").hasSize(2);
    }

    @Test
    void idsWrapAroundAsSerialNumbers() throws Exception {
        Recorder link = new Recorder();
        long near = 0xffff_fffeL;
        unsettled.add(near, link, 0);
        unsettled.add(0xffff_ffffL, link, 1);
        unsettled.add(0, link, 2);
        unsettled.add(1, link, 3);
        dispose(0xffff_ffffL, 0, true);
        assertThat(link.settled).containsExactly("1..2 ACCEPTED");
        assertThat(unsettled.size()).isEqualTo(2);
    }

    @Test
    void preSettledIdsBetweenUnsettledOnesTakeNoRoom() throws Exception {
        Recorder held = new Recorder();
        Recorder busy = new Recorder();
        unsettled.add(0, held, 0);
        // a million deliveries of other links go by, each settled soon after, with pre-settled ids between them
        for (long n = 0; n < 1_000_000; n++) {
            long id = 2 + n * 3;
            unsettled.add(id, busy, n);
            dispose(id, id, true);
        }
        assertThat(unsettled.size()).isEqualTo(1);
        assertThat(unsettled.capacity()).as("the ring follows what is unsettled").isLessThanOrEqualTo(128);
        dispose(0, 0, false);
        assertThat(held.settled).containsExactly("0..0 RELEASED");
    }
}
