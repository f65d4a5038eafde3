package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The detach and end exchanges when the broker speaks first [2.6.6, 2.5.5]: the handle or channel stays taken
 * until the peer's reply, frames in flight meanwhile are ignored, and afterwards it is free for reuse.
 */
@ExtendWith(LeakDetection.class)
class SessionLifecycleTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void aRefusedAttachKeepsItsHandleUntilThePeersDetachThenTheHandleIsReused() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach refusal = client.attachReceiver(0, RawClient.source("/queues/nope"), false);
            assertThat(refusal.getSource()).isNull();
            assertThat(refusal.getTarget()).as("echoed, as RabbitMQ does").isNotNull();
            assertThat(refusal.getInitialDeliveryCount()).as("a sender's attach carries it").isNotNull();
            Detach detach = client.read().as(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.NOT_FOUND.symbol());

            // a flow sent before the client saw the detach is ignored, and so is its reply detach (no answer)
            client.flow(0, 0, 10, false, false);
            client.write(0, RawClient.detach(0, true));

            publishAndExpectAccepted(client, 0, "life-reuse");
        }
    }

    @Test
    void aLinkDetachedWithAnErrorKeepsItsHandleUntilThePeersDetach() throws Exception {
        try (RunningBroker small = RunningBroker.start("max-message-size=1000");
             RawClient client = RawClient.openSession(small.port())) {
            client.attachSender(0, "life-big");
            client.readUntil(Flow.class);
            client.transfer(0, 0, Messages.data("x".repeat(2000), null), false);
            Detach detach = client.readUntil(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.MESSAGE_SIZE_EXCEEDED.symbol());

            // in flight: a transfer on the detached handle is dropped, not an error
            client.transfer(0, 1, Messages.data("late", null), false);
            client.write(0, RawClient.detach(0, true));

            publishAndExpectAccepted(client, 0, "life-big");
        }
    }

    @Test
    void anAttachOnAHandleAwaitingThePeersDetachIsHandleInUse() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, RawClient.source("/queues/nope"), false);
            client.read().as(Detach.class);
            Attach again = new Attach();
            again.setName("early");
            again.setHandle(UnsignedInteger.ZERO);
            again.setRole(Role.SENDER);
            again.setTarget(new org.apache.qpid.proton.amqp.messaging.Target());
            client.write(0, again);
            End end = client.readUntil(End.class);
            assertThat((Object) end.getError().getCondition()).isEqualTo(AmqpError.HANDLE_IN_USE.symbol());
        }
    }

    @Test
    void anErrorEndKeepsTheChannelUntilThePeersEndThenANewSessionWorks() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.write(0, backwardsDisposition());
            End end = client.readUntil(End.class);
            assertThat((Object) end.getError().getCondition()).isEqualTo(AmqpError.INVALID_FIELD.symbol());

            // frames in flight on the ended channel are ignored; the reply end draws no answer
            client.flow(0, 0, 10, false, false);
            client.write(0, new End());

            Begin begin = client.begin();
            assertThat(begin.getRemoteChannel().intValue()).isZero();
            publishAndExpectAccepted(client, 0, "life-after-end");
        }
    }

    @Test
    void aBeginOnAnEndedChannelBeforeThePeersEndClosesTheConnection() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.write(0, backwardsDisposition());
            client.readUntil(End.class);
            Begin begin = new Begin();
            begin.setNextOutgoingId(UnsignedInteger.ZERO);
            begin.setIncomingWindow(UnsignedInteger.valueOf(100));
            begin.setOutgoingWindow(UnsignedInteger.valueOf(100));
            client.write(0, begin);
            Close close = client.readUntil(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.NOT_ALLOWED.symbol());
        }
    }

    /** A disposition whose last comes before its first: a session error. */
    private static Disposition backwardsDisposition() {
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.valueOf(5));
        d.setLast(UnsignedInteger.valueOf(2));
        d.setSettled(true);
        d.setState(Accepted.getInstance());
        return d;
    }

    private static void publishAndExpectAccepted(RawClient client, int handle, String queue) throws Exception {
        Attach attach = client.attachSender(handle, queue);
        assertThat(attach.getTarget()).isNotNull();
        client.readUntil(Flow.class);
        client.transfer(handle, 100, Messages.data("hello", null), false);
        Disposition disposition = client.readUntil(Disposition.class);
        assertThat(disposition.getFirst().longValue()).isEqualTo(100);
        assertThat(disposition.getState()).isInstanceOf(Accepted.class);
    }
}
