package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Publisher credit with the queue's confirms held back (stepped queue executor): credit is topped up only while
 * the link's unconfirmed deliveries are under the cap, a transfer beyond credit detaches the link, and confirms
 * come back as one disposition range.
 */
@ExtendWith(LeakDetection.class)
class PublisherCreditTest {

    @Test
    void noNewCreditWhileUnconfirmedIsAtTheCapThenCreditResumes() throws Exception {
        try (EmbeddedConnection c = new EmbeddedConnection("publisher-credit=4", "max-unconfirmed=2").handshake()) {
            // transient, so a confirm comes from the (stepped) queue, not from the journal's thread
            c.vhost().declareQueue("capped", false, java.util.Map.of());
            c.attachSender(0, "capped");
            assertThat(c.readUntil(Flow.class).getLinkCredit().intValue()).isEqualTo(4);
            for (int i = 0; i < 4; i++) {
                c.transfer(0, i, Messages.data("m" + i, null));
            }
            assertThat(c.drain()).as("no confirms, so no dispositions and no credit").isEmpty();

            c.queues.runAll();
            java.util.List<Long> acceptedIds = new java.util.ArrayList<>();
            Flow flow = null;
            for (Object frame : c.drain()) {
                if (frame instanceof Disposition d) {
                    assertThat(d.getState()).isInstanceOf(Accepted.class);
                    assertThat(d.getSettled()).isTrue();
                    long last = d.getLast() == null ? d.getFirst().longValue() : d.getLast().longValue();
                    for (long id = d.getFirst().longValue(); id <= last; id++) {
                        acceptedIds.add(id);
                    }
                } else if (frame instanceof Flow f) {
                    flow = f;
                }
            }
            assertThat(acceptedIds).as("every delivery accepted once, in ranges").containsExactly(0L, 1L, 2L, 3L);
            assertThat(flow).as("credit resumes once confirms are in").isNotNull();
            assertThat(flow.getDeliveryCount().intValue()).isEqualTo(4);
            assertThat(flow.getLinkCredit().intValue()).isEqualTo(4);
        }
    }

    @Test
    void aTransferBeyondCreditDetachesTheLinkWithTransferLimitExceeded() throws Exception {
        try (EmbeddedConnection c = new EmbeddedConnection("publisher-credit=2", "max-unconfirmed=1").handshake()) {
            c.vhost().declareQueue("over-credit", false, java.util.Map.of());
            c.attachSender(0, "over-credit");
            assertThat(c.readUntil(Flow.class).getLinkCredit().intValue()).isEqualTo(2);
            for (int i = 0; i < 3; i++) {
                c.transfer(0, i, Messages.data("m" + i, null));
            }
            Detach detach = c.readUntil(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.TRANSFER_LIMIT_EXCEEDED.symbol());
        }
    }
}
