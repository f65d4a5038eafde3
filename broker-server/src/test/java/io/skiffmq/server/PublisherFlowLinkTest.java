package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.time.ManualClock;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An AMQP 1.0 publisher held back by its queue ({@link io.skiffmq.core.queue.PublisherFlow}), on one embedded
 * connection with the queue inline and time moved by hand: once it outruns a consumer that keeps taking, its link
 * gets no more credit; once the consumer has drained the backlog, credit comes again, and nothing is lost.
 */
@ExtendWith(LeakDetection.class)
class PublisherFlowLinkTest {
    private static final int SENDER = 0;
    private static final int RECEIVER = 1;

    @Test
    void aPublisherOutrunningItsConsumerGetsNoCreditUntilTheBacklogDrains() throws Exception {
        ManualClock clock = new ManualClock(0);
        try (EmbeddedConnection c = EmbeddedConnection.withQueuesInline(clock, "queue-memory-limit=65536",
                "publisher-credit=100").handshake()) {
            c.vhost().declareQueue("paced", false, Map.of());
            c.attachSender(SENDER, "paced");
            long credit = c.readUntil(Flow.class).getLinkCredit().longValue();
            c.attachReceiver(RECEIVER, "paced");
            c.drain();
            byte[] message = Messages.data("x".repeat(1000), null);
            long sent = 0;
            long received = 0;
            int rounds = 0;
            // each round: the consumer takes 50, the publisher sends all its credit
            while (credit > 0 && rounds++ < 20) {
                clock.advance(100);
                c.grant(RECEIVER, received, 50);
                for (; credit > 0; credit--) {
                    c.transfer(SENDER, sent++, message);
                }
                List<Object> frames = c.drain();
                received += transfers(frames);
                credit = senderCredit(frames, credit);
            }
            assertThat(credit).as("the publisher is held after %d rounds, %d sent", rounds, sent).isZero();
            assertThat(c.vhost().queue("paced").holdsPublishers()).isTrue();

            c.grant(RECEIVER, received, (int) (sent - received)); // the consumer catches up
            List<Object> frames = c.drain();
            received += transfers(frames);
            assertThat(received).isEqualTo(sent);
            assertThat(senderCredit(frames, 0)).as("credit once the backlog is drained").isEqualTo(100);
            assertThat(c.vhost().queue("paced").holdsPublishers()).isFalse();
        }
    }

    private static int transfers(List<Object> frames) {
        int count = 0;
        for (Object frame : frames) {
            if (frame instanceof Transfer t && t.getHandle().intValue() == RECEIVER) {
                count++;
            }
        }
        return count;
    }

    /** The credit the last flow for the publisher's link granted, or {@code credit} when none came. */
    private static long senderCredit(List<Object> frames, long credit) {
        for (Object frame : frames) {
            if (frame instanceof Flow f && f.getHandle() != null && f.getHandle().intValue() == SENDER) {
                credit = f.getLinkCredit().longValue();
            }
        }
        return credit;
    }
}
