package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Memory and disk alarms over AMQP 1.0, in raw frames, with the broker's readings fed by the test
 * ({@link ForcedAlarms}): every session is told incoming-window 0 and publishers get no credit while an alarm is
 * up; attaching, consuming and settling go on, and new connections open; when the alarm clears, each session gets
 * its initial window back and publishing resumes. A client that sends on regardless loses its session.
 */
@ExtendWith(LeakDetection.class)
class ResourceAlarmTest {
    private static final long SESSION_WINDOW = 2048;
    private static RunningBroker broker;
    private static ForcedAlarms alarms;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        alarms = broker.forceAlarms();
    }

    @AfterEach
    void clearAlarms() {
        for (Resource resource : Resource.values()) {
            alarms.clear(resource);
        }
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @ParameterizedTest
    @EnumSource(Resource.class)
    void sessionsAreToldWindowZeroWhileOthersAttachAndConsumeThenTheInitialWindowComesBack(Resource resource)
            throws Exception {
        String queue = "alarm-" + resource;
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, queue);
            assertThat(publisher.readUntil(Flow.class).getLinkCredit().longValue()).isPositive();
            publisher.transfer(0, 0, Messages.data("before", null), false);
            assertThat(publisher.readUntil(Disposition.class).getState()).isInstanceOf(Accepted.class);

            alarms.raise(resource);
            Flow closed = publisher.readUntil(Flow.class);
            assertThat(closed.getHandle()).as("a session flow").isNull();
            assertThat(closed.getIncomingWindow().longValue()).isZero();

            try (RawClient other = new RawClient(broker.port())) {
                other.sasl("guest", "guest");
                other.open();
                Begin begin = other.begin();
                assertThat(begin.getIncomingWindow().longValue()).as("a session begun during the alarm").isZero();
                // consuming goes on: the message published before the alarm arrives and is accepted
                other.attachReceiver(0, RawClient.source(queue), false);
                other.flow(0, 0, 10, false, false);
                RawClient.Frame delivery = readTransfer(other);
                Transfer transfer = delivery.as(Transfer.class);
                assertThat(Messages.body(delivery.payload())).isEqualTo("before");
                other.write(0, RawClient.accept(transfer.getDeliveryId().longValue(),
                    transfer.getDeliveryId().longValue()));
                // a publisher may attach, but gets no credit until the alarm clears
                Attach attached = other.attachSender(1, queue);
                assertThat(attached.getTarget()).as("attached, not refused").isNotNull();
                assertThat(other.silentFor(200)).as("no credit during the alarm").isTrue();

                alarms.clear(resource);
                Flow reopened = publisher.readUntil(Flow.class);
                assertThat(reopened.getHandle()).isNull();
                assertThat(reopened.getIncomingWindow().longValue()).isEqualTo(SESSION_WINDOW);
                Flow otherSession = other.read().as(Flow.class);
                assertThat(otherSession.getHandle()).isNull();
                assertThat(otherSession.getIncomingWindow().longValue()).isEqualTo(SESSION_WINDOW);
                Flow credit = other.read().as(Flow.class);
                assertThat(credit.getHandle().longValue()).as("the publisher attached during the alarm").isEqualTo(1);
                assertThat(credit.getLinkCredit().longValue()).isPositive();

                // the accepted message is gone: detaching the consumer requeues nothing
                other.write(0, RawClient.detach(0, true));
                other.readUntil(Detach.class);
            }
            publisher.transfer(0, 1, Messages.data("after", null), false);
            assertThat(publisher.readUntil(Disposition.class).getState()).as("publishing resumes")
                .isInstanceOf(Accepted.class);
        }
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source(queue), true);
            consumer.flow(0, 0, 10, false, false);
            assertThat(Messages.body(readTransfer(consumer).payload())).isEqualTo("after");
            assertThat(consumer.silentFor(200)).as("nothing else is left").isTrue();
        }
    }

    @Test
    void theSecondAlarmChangesNothingAndOnlyTheLastClearReopensTheWindow() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            alarms.raise(Resource.MEMORY);
            assertThat(client.read().as(Flow.class).getIncomingWindow().longValue()).isZero();
            alarms.raise(Resource.DISK);
            alarms.clear(Resource.MEMORY);
            assertThat(client.silentFor(200)).as("still held back by the disk alarm").isTrue();
            alarms.clear(Resource.DISK);
            assertThat(client.read().as(Flow.class).getIncomingWindow().longValue()).isEqualTo(SESSION_WINDOW);
        }
    }

    @Test
    void transfersInFlightWhenTheWindowClosesAreTakenAndOneMoreEndsTheSession() throws Exception {
        try (RunningBroker small = RunningBroker.start("session-window=4");
                RawClient publisher = RawClient.openSession(small.port())) {
            ForcedAlarms forced = small.forceAlarms();
            publisher.attachSender(0, "violation");
            publisher.readUntil(Flow.class);
            forced.raise(Resource.MEMORY);
            assertThat(publisher.readUntil(Flow.class).getIncomingWindow().longValue()).isZero();
            // the client ignores it: the 4 transfers the window still allowed could have been on their way
            int accepted = 0;
            for (int i = 0; i < 4; i++) {
                publisher.transfer(0, i, Messages.data("in flight " + i, null), false);
            }
            while (accepted < 4) {
                Disposition d = publisher.readUntil(Disposition.class);
                assertThat(d.getState()).isInstanceOf(Accepted.class);
                long last = d.getLast() == null ? d.getFirst().longValue() : d.getLast().longValue();
                accepted += (int) (last - d.getFirst().longValue() + 1);
            }
            publisher.transfer(0, 4, Messages.data("one too many", null), false);
            End end = publisher.readUntil(End.class);
            assertThat((Object) end.getError().getCondition()).isEqualTo(AmqpError.WINDOW_VIOLATION.symbol());
            assertThat(small.vhost("/").queue("violation").readyCount()).as("what was taken stays taken")
                .isEqualTo(4);
        }
    }

    private static RawClient.Frame readTransfer(RawClient client) throws java.io.IOException {
        while (true) {
            RawClient.Frame frame = client.read();
            if (frame.body() instanceof Transfer) {
                return frame;
            }
        }
    }
}
