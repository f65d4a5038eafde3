package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.config.BrokerConfig;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Connections, sessions and a first publish/consume, frame by frame. */
@ExtendWith(LeakDetection.class)
class ConnectionTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("handshake-timeout=1000");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void saslAnonymousIsOfferedByDefaultAndLogsInAsGuestFromLoopback() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            assertThat(client.saslMechanisms()).contains(Symbol.valueOf("ANONYMOUS"), Symbol.valueOf("PLAIN"));
            assertThat(client.saslAnonymous()).isZero();
            assertThat(client.open()).isNotNull();
        }
    }

    @Test
    void anonymousLoginUserNoneTurnsSaslAnonymousOff() throws Exception {
        try (RunningBroker noAnonymous = RunningBroker.start("anonymous-login-user=none");
             RawClient client = new RawClient(noAnonymous.port())) {
            assertThat(client.saslMechanisms()).containsExactly(Symbol.valueOf("PLAIN"));
            assertThat(client.saslAnonymous()).isEqualTo(1);
        }
    }

    @Test
    void openAdvertisesWhatClientsNeed() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            assertThat(client.sasl("guest", "guest")).isZero();
            Open open = client.open();
            assertThat(open.getOfferedCapabilities()).contains(Symbol.valueOf("ANONYMOUS-RELAY"));
            assertThat(RawClient.properties(open))
                .containsEntry(Symbol.valueOf("product"), "SkiffMQ")
                .containsEntry(Symbol.valueOf("version"), BrokerConfig.RABBITMQ_VERSION)
                .containsKey(Symbol.valueOf("node"))
                .containsKey(Symbol.valueOf("skiffmq-version"));
            assertThat(open.getMaxFrameSize().intValue()).isEqualTo(131_072);
        }
    }

    @Test
    void wrongPasswordGetsAnAuthOutcomeAndAClose() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            assertThat(client.sasl("guest", "wrong")).isEqualTo(1);
            assertThat(client.closedByBroker()).isTrue();
        }
        try (RawClient client = new RawClient(broker.port())) {
            assertThat(client.sasl("nobody", "guest")).isEqualTo(1);
        }
    }

    /** As RabbitMQ 4's reader answers it (check_vhost_exists): unauthorized-access, not not-found. */
    @Test
    void unknownVirtualHostIsClosedWithUnauthorizedAccess() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            Open open = new Open();
            open.setContainerId("c");
            open.setHostname("vhost:nope");
            client.write(0, open);
            client.read().as(Open.class);
            Close close = client.read().as(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.UNAUTHORIZED_ACCESS.symbol());
            assertThat(close.getError().getDescription())
                .isEqualTo("AMQP 1.0 connection failed: virtual host 'nope' does not exist");
        }
    }

    @Test
    void aClientThatNeverOpensIsClosedAfterTheHandshakeTimeout() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            Close close = client.readUntil(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void publishThenConsumeThroughABareQueueName() throws Exception {
        try (RawClient publisher = RawClient.openSession(broker.port());
             RawClient consumer = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "first-queue");
            Flow credit = publisher.readUntil(Flow.class);
            assertThat(credit.getLinkCredit().intValue()).isEqualTo(1000);
            for (int i = 0; i < 10; i++) {
                publisher.transfer(0, i, Messages.data("m" + i, null), false);
            }
            int confirmed = 0;
            while (confirmed < 10) {
                Disposition d = publisher.readUntil(Disposition.class);
                assertThat(d.getState()).isInstanceOf(org.apache.qpid.proton.amqp.messaging.Accepted.class);
                long last = d.getLast() == null ? d.getFirst().longValue() : d.getLast().longValue();
                confirmed += (int) (last - d.getFirst().longValue() + 1);
            }

            Attach attach = consumer.attachReceiver(0, RawClient.source("/queues/first-queue"), false);
            assertThat(attach.getInitialDeliveryCount().intValue()).isZero();
            consumer.flow(0, 0, 100, false, false);
            for (int i = 0; i < 10; i++) {
                RawClient.Frame frame = consumer.read();
                Transfer transfer = frame.as(Transfer.class);
                assertThat(transfer.getDeliveryId().intValue()).isEqualTo(i);
                assertThat(Messages.body(frame.payload())).isEqualTo("m" + i);
                assertThat(Messages.decode(frame.payload()).getMessageAnnotations().getValue())
                    .containsEntry(Symbol.valueOf("x-routing-key"), "first-queue");
            }
            consumer.write(0, RawClient.accept(0, 9));
            consumer.write(0, RawClient.detach(0, true));
            assertThat(consumer.readUntil(Detach.class).getError()).isNull();
        }
    }

    @Test
    void publishingToAMissingQueueAddressIsRefusedAtAttach() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach attach = client.attachSender(0, "/queues/does-not-exist");
            assertThat(attach.getTarget()).isNull();
            Detach detach = client.read().as(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.NOT_FOUND.symbol());
        }
    }

    @Test
    void anonymousRelayRoutesByToAndReleasesWhatRoutesNowhere() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(0, "relay-target");
            client.readUntil(Flow.class);
            client.write(0, RawClient.detach(0, true));
            client.readUntil(Detach.class);
            client.attachSender(1, null);
            client.readUntil(Flow.class);
            client.transfer(1, 0, Messages.data("x", "/queues/relay-target"), false);
            assertThat(client.readUntil(Disposition.class).getState())
                .isInstanceOf(org.apache.qpid.proton.amqp.messaging.Accepted.class);
            client.transfer(1, 1, Messages.data("y", "/exchanges/amq.direct/nothing-bound"), false);
            assertThat(client.readUntil(Disposition.class).getState())
                .isInstanceOf(org.apache.qpid.proton.amqp.messaging.Released.class);
        }
    }
}
