package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Idle timeouts both ways [2.4.5] and graceful shutdown. */
@ExtendWith(LeakDetection.class)
class LifecycleTest {

    @Test
    void heartbeatsAtHalfThePeersTimeoutAndASilentPeerIsClosed() throws Exception {
        try (RunningBroker broker = RunningBroker.start("idle-timeout=1500");
             RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            Open open = new Open();
            open.setContainerId("idle");
            open.setIdleTimeOut(UnsignedInteger.valueOf(400));
            client.write(0, open);
            Open ours = client.read().as(Open.class);
            assertThat(ours.getIdleTimeOut().intValue()).isEqualTo(1500);
            // we send nothing: the broker's empty frames (every ~200 ms) precede its close at 1500 ms
            int emptyFrames = client.countEmptyFramesUntil(Close.class);
            assertThat(emptyFrames).isGreaterThanOrEqualTo(3);
            assertThat((Object) client.lastClose().getError().getCondition())
                .isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
        }
    }

    @Test
    void shutdownClosesConnectionsWithConnectionForced() throws Exception {
        RunningBroker broker = RunningBroker.start();
        try (RawClient client = RawClient.openSession(broker.port())) {
            broker.close();
            Close close = client.readUntil(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.CONNECTION_FORCED.symbol());
            assertThat(client.closedByBroker()).isTrue();
        }
    }
}
