package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.IOException;
import java.util.List;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transaction.Coordinator;
import org.apache.qpid.proton.amqp.transaction.Declare;
import org.apache.qpid.proton.amqp.transaction.Declared;
import org.apache.qpid.proton.amqp.transaction.Discharge;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import org.apache.qpid.proton.amqp.transaction.TxnCapability;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The transaction coordinator in raw frames [4]: several transactions at once on one session, the errors a
 * discharge and a declare meet, refused coordinators, a commit that cannot route, and the held-message limit.
 */
@ExtendWith(LeakDetection.class)
class Amqp10TransactionFramesTest {
    private static final int COORDINATOR = 0;
    private static final int SENDER = 1;
    private static final int RECEIVER = 2;

    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** A session's transaction controller: delivery-ids shared by its coordinator and publisher links. */
    private static final class Controller {
        final RawClient client;
        long nextDeliveryId;

        Controller(RawClient client) {
            this.client = client;
        }

        /** Attaches the coordinator asking for {@code capabilities}; returns our attach's answer. */
        Attach attachCoordinator(Symbol... capabilities) throws IOException {
            Attach attach = new Attach();
            attach.setName("txn-controller");
            attach.setHandle(UnsignedInteger.valueOf(COORDINATOR));
            attach.setRole(Role.SENDER);
            attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
            attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
            attach.setSource(new Source());
            Coordinator coordinator = new Coordinator();
            coordinator.setCapabilities(capabilities);
            attach.setTarget(coordinator);
            client.write(0, attach);
            return client.read().as(Attach.class);
        }

        /** Sends a control message; returns the state of the disposition that settles it. */
        DeliveryState control(Object body) throws IOException {
            long id = nextDeliveryId++;
            client.transfer(COORDINATOR, id, encode(new AmqpValue(body)), false);
            Disposition disposition = client.readUntil(Disposition.class);
            assertThat(disposition.getFirst().longValue()).isEqualTo(id);
            assertThat(disposition.getSettled()).isTrue();
            return disposition.getState();
        }

        Binary declare() throws IOException {
            return ((Declared) control(new Declare())).getTxnId();
        }

        DeliveryState discharge(Binary txnId, boolean fail) throws IOException {
            Discharge discharge = new Discharge();
            discharge.setTxnId(txnId);
            discharge.setFail(fail);
            return control(discharge);
        }

        /** Publishes {@code body} on the sender link within {@code txnId}; returns the delivery's state. */
        DeliveryState publish(Binary txnId, String body) throws IOException {
            long id = nextDeliveryId++;
            TransactionalState state = new TransactionalState();
            state.setTxnId(txnId);
            client.transfer(SENDER, id, Messages.data(body, null), false, state);
            Disposition disposition = client.readUntil(Disposition.class);
            assertThat(disposition.getFirst().longValue()).isEqualTo(id);
            return disposition.getState();
        }

        /** Attaches the sender link to {@code address} and waits for its credit. */
        void attachSender(String address) throws IOException {
            assertThat(client.attachSender(SENDER, address).getTarget()).isNotNull();
            client.readUntil(Flow.class);
        }
    }

    private static byte[] encode(AmqpValue body) {
        Message message = Message.Factory.create();
        message.setBody(body);
        return Messages.encode(message);
    }

    private static Controller controller(RawClient client) throws IOException {
        Controller controller = new Controller(client);
        Attach answer = controller.attachCoordinator(TxnCapability.LOCAL_TXN);
        assertThat(answer.getTarget()).isInstanceOf(Coordinator.class);
        assertThat(((Coordinator) answer.getTarget()).getCapabilities())
            .contains(TxnCapability.LOCAL_TXN, TxnCapability.MULTI_TXNS_PER_SSN);
        client.readUntil(Flow.class); // the coordinator's credit
        return controller;
    }

    private static void assertTransactional(DeliveryState state, Binary txnId) {
        assertThat(state).isInstanceOf(TransactionalState.class);
        assertThat(((TransactionalState) state).getTxnId()).isEqualTo(txnId);
        assertThat(((TransactionalState) state).getOutcome()).isInstanceOf(Accepted.class);
    }

    private static void assertRejected(DeliveryState state, String condition, String description) {
        assertThat(state).isInstanceOf(Rejected.class);
        assertThat(((Rejected) state).getError().getCondition().toString()).isEqualTo(condition);
        assertThat(((Rejected) state).getError().getDescription()).contains(description);
    }

    /** The bodies on {@code queue}: a receiver takes what is there and drains; the drain's flow ends the list. */
    private static List<String> bodies(RawClient client, String queue) throws IOException {
        client.attachReceiver(RECEIVER, RawClient.source(queue), true);
        client.flow(RECEIVER, 0, 100, true, false);
        java.util.ArrayList<String> bodies = new java.util.ArrayList<>();
        while (true) {
            RawClient.Frame frame = client.read();
            if (frame.body() instanceof Transfer) {
                bodies.add(Messages.body(frame.payload()));
            } else if (frame.body() instanceof Flow flow && flow.getHandle() != null
                    && flow.getHandle().intValue() == RECEIVER && flow.getDrain()) {
                return bodies;
            }
        }
    }

    @Test
    void twoTransactionsInterleaveOnOneSession() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            controller.attachSender("tx-two");
            Binary a = controller.declare();
            Binary b = controller.declare();
            assertThat(a).isNotEqualTo(b);
            assertTransactional(controller.publish(a, "in A"), a);
            assertTransactional(controller.publish(b, "in B"), b);
            assertTransactional(controller.publish(a, "in A too"), a);

            assertThat(controller.discharge(a, false)).isInstanceOf(Accepted.class);
            assertThat(controller.discharge(b, true)).isInstanceOf(Accepted.class);
            assertThat(bodies(client, "tx-two")).containsExactly("in A", "in A too");
            assertRejected(controller.discharge(a, false), "amqp:transaction:unknown-id", "no open transaction");
        }
    }

    @Test
    void aDischargeOfAnUnknownTxnIdIsRejected() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            assertRejected(controller.discharge(new Binary(new byte[] {9, 9, 9}), false),
                "amqp:transaction:unknown-id", "no open transaction 090909 on this session");
        }
    }

    @Test
    void anIdIsKnownOnlyToTheSessionThatDeclaredIt() throws Exception {
        try (RawClient one = RawClient.openSession(broker.port());
                RawClient other = RawClient.openSession(broker.port())) {
            Binary id = controller(one).declare();
            assertRejected(controller(other).discharge(id, false), "amqp:transaction:unknown-id",
                "no open transaction");
        }
    }

    @Test
    void aCoordinatorAskingOnlyForDistributedTransactionsIsRefused() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach answer = new Controller(client).attachCoordinator(TxnCapability.DISTRIBUTED_TXN);
            assertThat(answer.getTarget()).as("[2.6.3] refused: no terminus").isNull();
            Detach detach = client.readUntil(Detach.class);
            assertThat(detach.getError().getCondition().toString()).isEqualTo("amqp:not-implemented");
            assertThat(detach.getError().getDescription()).contains("only local transactions");
        }
    }

    @Test
    void aDeclareWithAGlobalIdIsRejected() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            // proton-j cannot encode an opaque global-id: a described value stands for one
            long id = controller.nextDeliveryId++;
            byte[] body = encode(new AmqpValue(new org.apache.qpid.proton.amqp.DescribedType() {
                @Override
                public Object getDescriptor() {
                    return org.apache.qpid.proton.amqp.UnsignedLong.valueOf(0x31);
                }

                @Override
                public Object getDescribed() {
                    return List.of(new Binary(new byte[] {1, 2, 3}));
                }
            }));
            client.transfer(COORDINATOR, id, body, false);
            assertRejected(client.readUntil(Disposition.class).getState(), "amqp:not-implemented", "global-id");
        }
    }

    /** Publishes {@code body} to {@code queue} outside any transaction, on a link of its own. */
    private static void put(String queue, String body) throws IOException {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(SENDER, queue);
            client.readUntil(Flow.class);
            client.transfer(SENDER, 0, Messages.data(body, null), false);
            assertThat(client.readUntil(Disposition.class).getState()).isInstanceOf(Accepted.class);
        }
    }

    /** Attaches an unsettled receiver for {@code queue} on {@code handle} with credit. */
    private static void receive(RawClient client, int handle, String queue) throws IOException {
        Attach attach = new Attach();
        attach.setName("receiver-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.RECEIVER);
        attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
        attach.setSource(RawClient.source(queue));
        attach.setTarget(new org.apache.qpid.proton.amqp.messaging.Target());
        client.write(0, attach);
        client.readUntil(Attach.class);
        client.flow(handle, 0, 10, false, false);
    }

    /** The next transfer: its delivery-id, and the delivery-count of its header. */
    private static long[] nextDelivery(RawClient client) throws IOException {
        while (true) {
            RawClient.Frame frame = client.read();
            if (frame.body() instanceof Transfer transfer) {
                org.apache.qpid.proton.amqp.messaging.Header header = Messages.decode(frame.payload()).getHeader();
                long count = header == null || header.getDeliveryCount() == null ? 0
                    : header.getDeliveryCount().longValue();
                return new long[] {transfer.getDeliveryId().longValue(), count};
            }
        }
    }

    private static void settleIn(RawClient client, Binary txnId, long deliveryId) throws IOException {
        TransactionalState state = new TransactionalState();
        state.setTxnId(txnId);
        state.setOutcome(Accepted.getInstance());
        Disposition disposition = new Disposition();
        disposition.setRole(Role.RECEIVER);
        disposition.setFirst(UnsignedInteger.valueOf(deliveryId));
        disposition.setSettled(true);
        disposition.setState(state);
        client.write(0, disposition);
    }

    @Test
    void settlementsOnTwoLinksJoinOneTransactionRolledBackThenCommitted() throws Exception {
        put("tx-left", "left");
        put("tx-right", "right");
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            receive(client, 3, "tx-left");
            receive(client, 4, "tx-right");
            long[] first = nextDelivery(client);
            long[] second = nextDelivery(client);
            Binary rolledBack = controller.declare();
            settleIn(client, rolledBack, first[0]);
            settleIn(client, rolledBack, second[0]);
            assertThat(controller.discharge(rolledBack, true)).isInstanceOf(Accepted.class);

            long[] again = nextDelivery(client);
            long[] againToo = nextDelivery(client);
            assertThat(again[1]).as("redelivered, its delivery-count raised").isEqualTo(1);
            assertThat(againToo[1]).isEqualTo(1);
            Binary committed = controller.declare();
            settleIn(client, committed, again[0]);
            settleIn(client, committed, againToo[0]);
            assertThat(controller.discharge(committed, false)).isInstanceOf(Accepted.class);
            client.write(0, RawClient.detach(3, true));
            client.write(0, RawClient.detach(4, true));
            client.readUntil(Detach.class);
            client.readUntil(Detach.class);
            assertThat(bodies(client, "tx-left")).as("consumed by the commit").isEmpty();
        }
        put("tx-right", "marker");
        try (RawClient client = RawClient.openSession(broker.port())) {
            assertThat(bodies(client, "tx-right")).containsExactly("marker");
        }
    }

    @Test
    void aRangeSettledInOneTransactionLeavesAnotherTransactionsDeliveryAlone() throws Exception {
        for (String body : List.of("m0", "m1", "m2")) {
            put("tx-holes", body);
        }
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            receive(client, 3, "tx-holes");
            long[] d0 = nextDelivery(client);
            long[] d1 = nextDelivery(client);
            long[] d2 = nextDelivery(client);
            Binary a = controller.declare();
            Binary b = controller.declare();
            settleIn(client, a, d1[0]);
            TransactionalState inB = new TransactionalState();
            inB.setTxnId(b);
            inB.setOutcome(Accepted.getInstance());
            Disposition range = new Disposition();
            range.setRole(Role.RECEIVER);
            range.setFirst(UnsignedInteger.valueOf(d0[0]));
            range.setLast(UnsignedInteger.valueOf(d2[0]));
            range.setSettled(true);
            range.setState(inB);
            client.write(0, range);
            assertThat(controller.discharge(b, false)).isInstanceOf(Accepted.class);
            assertThat(controller.discharge(a, true)).isInstanceOf(Accepted.class);
            long[] back = nextDelivery(client);
            assertThat(back[1]).as("only A's delivery came back").isEqualTo(1);
            client.write(0, RawClient.detach(3, true));
            client.readUntil(Detach.class);
            assertThat(bodies(client, "tx-holes")).containsExactly("m1");
        }
    }

    @Test
    void aCommitAfterItsConsumerLinkWentRollsBack() throws Exception {
        put("tx-detached", "held");
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            receive(client, 3, "tx-detached");
            long[] delivery = nextDelivery(client);
            Binary id = controller.declare();
            settleIn(client, id, delivery[0]);
            client.write(0, RawClient.detach(3, true));
            client.readUntil(Detach.class);
            assertRejected(controller.discharge(id, false), "amqp:transaction:rollback", "detached before the commit");
            assertThat(bodies(client, "tx-detached")).containsExactly("held");
        }
    }

    @Test
    void aConnectionDroppedWithoutCloseRollsItsTransactionsBack() throws Exception {
        put("tx-dropped", "acquired");
        RawClient doomed = RawClient.openSession(broker.port());
        Controller controller = controller(doomed);
        controller.attachSender("tx-dropped");
        receive(doomed, 3, "tx-dropped");
        long[] delivery = nextDelivery(doomed);
        Binary id = controller.declare();
        settleIn(doomed, id, delivery[0]);
        assertTransactional(controller.publish(id, "held"), id);
        doomed.close(); // the socket goes, no close frame: every held message is released once (LeakDetection)

        try (RawClient client = RawClient.openSession(broker.port())) {
            receive(client, 3, "tx-dropped");
            long[] back = nextDelivery(client);
            assertThat(back[1]).as("given back, redelivered").isEqualTo(1);
            client.write(0, RawClient.accept(back[0], back[0]));
            client.write(0, RawClient.detach(3, true));
            client.readUntil(Detach.class);
            assertThat(bodies(client, "tx-dropped")).as("the held message was never routed").isEmpty();
        }
    }

    @Test
    void transactionalAcquisitionIsRefusedClearly() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Binary id = controller(client).declare();
            client.attachReceiver(RECEIVER, RawClient.source("tx-acquire"), false);
            Flow flow = new Flow();
            flow.setNextIncomingId(UnsignedInteger.ZERO);
            flow.setIncomingWindow(UnsignedInteger.valueOf(100));
            flow.setNextOutgoingId(UnsignedInteger.valueOf(1)); // the declare was our one transfer
            flow.setOutgoingWindow(UnsignedInteger.valueOf(100));
            flow.setHandle(UnsignedInteger.valueOf(RECEIVER));
            flow.setDeliveryCount(UnsignedInteger.ZERO);
            flow.setLinkCredit(UnsignedInteger.valueOf(10));
            flow.setProperties(java.util.Map.of(Symbol.valueOf("txn-id"), id));
            client.write(0, flow);
            Detach detach = client.readUntil(Detach.class);
            assertThat(detach.getHandle().intValue()).isEqualTo(RECEIVER);
            assertThat(detach.getError().getCondition().toString()).isEqualTo("amqp:not-implemented");
            assertThat(detach.getError().getDescription()).contains("transactional acquisition");
        }
    }

    @Test
    void aCommitWhoseQueueIsGoneRollsBack() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            controller.attachSender("tx-gone");
            Binary id = controller.declare();
            assertTransactional(controller.publish(id, "nowhere to go"), id);
            broker.vhost("/").deleteQueue("tx-gone");
            client.readUntil(Detach.class); // the sender's target was deleted
            assertRejected(controller.discharge(id, false), "amqp:transaction:rollback", "no queue 'tx-gone'");
        }
    }

    @Test
    void theConnectionsTransactionsShareOneByteLimit() throws Exception {
        String big = "x".repeat(600);
        try (RunningBroker limited = RunningBroker.start("max-transaction-bytes=1KiB");
                RawClient client = RawClient.openSession(limited.port())) {
            Controller controller = controller(client);
            controller.attachSender("tx-bytes");
            Binary first = controller.declare();
            Binary second = controller.declare();
            assertTransactional(controller.publish(first, big), first);
            assertRejected(controller.publish(second, big), "amqp:resource-limit-exceeded", "max-transaction-bytes");
            assertThat(controller.discharge(first, false)).as("the first is within the limit").isInstanceOf(
                Accepted.class);
            assertRejected(controller.discharge(second, false), "amqp:transaction:rollback", "max-transaction-bytes");
            Binary third = controller.declare();
            assertTransactional(controller.publish(third, big), third); // the commit gave the bytes back
            assertThat(controller.discharge(third, false)).isInstanceOf(Accepted.class);
            assertThat(bodies(client, "tx-bytes")).containsExactly(big, big);
        }
    }

    @Test
    void aCommitAQueueRefusesFailsWithTheReasonAndGivesTheSettlementsBack() throws Exception {
        broker.vhost("/").declareQueue("tx-full", false, java.util.Map.of("x-max-length", 1L,
            "x-overflow", "reject-publish"));
        put("tx-source", "input");
        try (RawClient client = RawClient.openSession(broker.port())) {
            Controller controller = controller(client);
            receive(client, 3, "tx-source");
            long[] input = nextDelivery(client);
            controller.attachSender("/queues/tx-full");
            Binary id = controller.declare();
            settleIn(client, id, input[0]);
            assertTransactional(controller.publish(id, "fits"), id);
            assertTransactional(controller.publish(id, "does not fit"), id);
            assertRejected(controller.discharge(id, false), "amqp:transaction:rollback", "a queue refused");
            long[] back = nextDelivery(client);
            assertThat(back[1]).as("the input is back, redelivered").isEqualTo(1);
            client.write(0, RawClient.accept(back[0], back[0]));
            assertThat(bodies(client, "tx-full")).as("what the queue took before it was full stays")
                .containsExactly("fits");
        }
    }

    @Test
    void aTransactionPastItsMessageLimitCanOnlyRollBack() throws Exception {
        try (RunningBroker limited = RunningBroker.start("max-transaction-messages=2");
                RawClient client = RawClient.openSession(limited.port())) {
            Controller controller = controller(client);
            controller.attachSender("tx-limit");
            Binary id = controller.declare();
            assertTransactional(controller.publish(id, "1"), id);
            assertTransactional(controller.publish(id, "2"), id);
            assertRejected(controller.publish(id, "3"), "amqp:resource-limit-exceeded", "max-transaction-messages");
            assertRejected(controller.discharge(id, false), "amqp:transaction:rollback", "max-transaction-messages");
            assertThat(bodies(client, "tx-limit")).isEmpty();
        }
    }
}
