package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A publisher's message that cannot go where it is addressed, frame by frame, as RabbitMQ 4.0.3 and later answer it
 * ({@code rabbit_amqp_session:lookup_target}, anonterm 2.2.2): on the anonymous relay an unsettled delivery is
 * rejected and the link goes on, a settled one detaches the link naming its delivery-tag; a fixed target whose
 * exchange was deleted releases the delivery and detaches; and a transfer's {@code settled} must agree with the
 * link's settle mode.
 */
@ExtendWith(LeakDetection.class)
class PublisherRoutingErrorsTest {
    private static final int LINK = 0;
    /** Where the links that go on after an error publish. */
    private static final String QUEUE = "routing-errors-q";
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        broker.vhost("/").declareExchange(new io.skiffmq.core.Exchange("routing-internal",
            io.skiffmq.core.Exchange.Type.FANOUT, true, false, true, Map.of()));
        broker.vhost("/").declareQueue(QUEUE);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static RawClient anonymousPublisher() throws Exception {
        RawClient client = RawClient.openSession(broker.port());
        client.attachSender(LINK, null);
        client.readUntil(Flow.class);
        return client;
    }

    private static ErrorCondition rejection(RawClient client, long deliveryId) throws Exception {
        Disposition disposition = client.readUntil(Disposition.class);
        assertThat(disposition.getFirst().longValue()).isEqualTo(deliveryId);
        assertThat(disposition.getSettled()).isTrue();
        assertThat(disposition.getState()).isInstanceOf(Rejected.class);
        return ((Rejected) disposition.getState()).getError();
    }

    private static void assertError(ErrorCondition error, AmqpError condition, String description) {
        assertThat((Object) error.getCondition()).isEqualTo(condition.symbol());
        assertThat(error.getDescription()).isEqualTo(description);
    }

    /**
     * An unsettled message to {@code to} is rejected with the error; the link goes on: the next message, to a queue
     * that exists, is accepted.
     */
    private static void assertRejectedAndTheLinkGoesOn(String to, AmqpError condition, String description)
            throws Exception {
        try (RawClient client = anonymousPublisher()) {
            client.transfer(LINK, 0, Messages.data("lost", to), false);
            assertError(rejection(client, 0), condition, description);
            client.transfer(LINK, 1, Messages.data("after", "/queues/" + QUEUE), false);
            Disposition next = client.readUntil(Disposition.class);
            assertThat(next.getFirst().longValue()).isEqualTo(1);
            assertThat(next.getState()).isInstanceOf(org.apache.qpid.proton.amqp.messaging.Accepted.class);
        }
    }

    @Test
    void anUnsettledMessageToAMissingExchangeIsRejectedAndTheLinkGoesOn() throws Exception {
        assertRejectedAndTheLinkGoesOn("/exchanges/routing-missing", AmqpError.NOT_FOUND,
            "no exchange 'routing-missing' in vhost '/'");
    }

    /** What detaches an anonymous publisher that sends delivery {@code id} to {@code to}. */
    private static Detach detachAfter(long id, String to, boolean settled) throws Exception {
        try (RawClient client = anonymousPublisher()) {
            client.transfer(LINK, id, Messages.data("lost", to), settled);
            Detach detach = client.readUntil(Detach.class);
            assertThat(detach.getClosed()).isTrue();
            return detach;
        }
    }

    @Test
    void aSettledMessageToAMissingExchangeDetachesTheLinkNamingItsDeliveryTag() throws Exception {
        ErrorCondition error = detachAfter(7, "/exchanges/routing-missing", true).getError();
        assertError(error, AmqpError.NOT_FOUND, "no exchange 'routing-missing' in vhost '/'");
        // RawClient's delivery-tag is the delivery-id's digits
        assertThat(error.getInfo()).isEqualTo(Map.of(Symbol.valueOf("delivery-tag"), new Binary("7".getBytes())));
    }

    @Test
    void aMessageWithoutToIsAPreconditionFailure() throws Exception {
        assertRejectedAndTheLinkGoesOn(null, AmqpError.PRECONDITION_FAILED,
            "anonymous terminus requires 'to' address to be set");
    }

    @Test
    void aToThatIsNoAddressIsAPreconditionFailure() throws Exception {
        assertRejectedAndTheLinkGoesOn("/nowhere/x", AmqpError.PRECONDITION_FAILED,
            "bad 'to' address string: /nowhere/x");
    }

    @Test
    void aToAnInternalExchangeDetachesTheLink() throws Exception {
        assertError(detachAfter(0, "/exchanges/routing-internal", false).getError(), AmqpError.UNAUTHORIZED_ACCESS,
            "forbidden to publish to internal exchange 'routing-internal' in vhost '/'");
    }

    @Test
    void aFixedTargetWhoseExchangeWasDeletedReleasesAndDetaches() throws Exception {
        broker.vhost("/").declareExchange(new io.skiffmq.core.Exchange("routing-doomed",
            io.skiffmq.core.Exchange.Type.FANOUT, false, false, false, Map.of()));
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(LINK, "/exchanges/routing-doomed");
            client.readUntil(Flow.class);
            broker.vhost("/").deleteExchange("routing-doomed");
            assertThat(client.silentFor(200)).as("not detached before it publishes").isTrue();
            client.transfer(LINK, 0, Messages.data("late", null), false);
            Disposition released = client.readUntil(Disposition.class);
            assertThat(released.getState()).isInstanceOf(Released.class);
            Detach detach = client.readUntil(Detach.class);
            assertThat(detach.getClosed()).isTrue();
            assertError(detach.getError(), AmqpError.NOT_FOUND, "no exchange 'routing-doomed' in vhost '/'");
        }
    }

    @Test
    void aSettledTransferOnAnUnsettledLinkIsAnInvalidField() throws Exception {
        assertSettleModeRefused(SenderSettleMode.UNSETTLED, true,
            "sender settle mode is 'unsettled' but transfer settled flag is interpreted as being 'true'");
    }

    @Test
    void anUnsettledTransferOnASettledLinkIsAnInvalidField() throws Exception {
        assertSettleModeRefused(SenderSettleMode.SETTLED, false,
            "sender settle mode is 'settled' but transfer settled flag is interpreted as being 'false'");
    }

    private static void assertSettleModeRefused(SenderSettleMode mode, boolean settled, String description)
            throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(LINK, "/queues/" + QUEUE, mode);
            client.readUntil(Flow.class);
            client.transfer(LINK, 0, Messages.data("mismatched", null), settled);
            assertError(client.readUntil(Detach.class).getError(), AmqpError.INVALID_FIELD, description);
        }
    }

    @Test
    void receiverSettleModeSecondIsNotImplemented() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(LINK, "/queues/" + QUEUE);
            client.readUntil(Flow.class);
            Transfer transfer = new Transfer();
            transfer.setHandle(UnsignedInteger.valueOf(LINK));
            transfer.setDeliveryId(UnsignedInteger.ZERO);
            transfer.setDeliveryTag(new Binary(new byte[] {0}));
            transfer.setMessageFormat(UnsignedInteger.ZERO);
            transfer.setRcvSettleMode(ReceiverSettleMode.SECOND);
            client.write(io.skiffmq.codec.amqp10.AmqpFrame.TYPE_AMQP, 0, transfer, Messages.data("second", null));
            assertError(client.readUntil(Detach.class).getError(), AmqpError.NOT_IMPLEMENTED,
                "rcv-settle-mode second not supported");
        }
    }
}
