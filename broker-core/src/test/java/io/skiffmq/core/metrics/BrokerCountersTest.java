package io.skiffmq.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Totals by protocol: open connections summed when read, closed ones kept, channels only while open. */
class BrokerCountersTest {
    @Test
    void closedConnectionsStayInTheTotalsByProtocol() {
        BrokerCounters broker = new BrokerCounters();
        ConnectionCounters a = new ConnectionCounters(BrokerCounters.AMQP091);
        ConnectionCounters b = new ConnectionCounters(BrokerCounters.AMQP091);
        ConnectionCounters c = new ConnectionCounters(BrokerCounters.AMQP10);
        broker.opened(a);
        broker.opened(b);
        broker.opened(c);
        a.received(true);
        a.routed();
        a.channelOpened();
        b.received(false);
        b.unroutable(true);
        b.channelOpened();
        c.received(false);
        c.delivered(false, false, true);
        c.acknowledged(1);
        c.bytesIn(100);

        assertThat(broker.totals(BrokerCounters.AMQP091).received()).isEqualTo(2);
        assertThat(broker.totals(BrokerCounters.AMQP091).receivedConfirm()).isEqualTo(1);
        assertThat(broker.totals(BrokerCounters.AMQP091).channels()).isEqualTo(2);
        broker.closed(a, "/");
        broker.closed(a, "/"); // twice: counted once
        BrokerCounters.Totals amqp091 = broker.totals(BrokerCounters.AMQP091);
        assertThat(amqp091.received()).isEqualTo(2);
        assertThat(amqp091.routed()).isEqualTo(1);
        assertThat(amqp091.unroutableReturned()).isEqualTo(1);
        assertThat(amqp091.unroutableDropped()).isZero();
        assertThat(amqp091.channels()).as("a closed connection has no channels").isEqualTo(1);

        broker.closed(c, "other");
        BrokerCounters.Totals amqp10 = broker.totals(BrokerCounters.AMQP10);
        assertThat(amqp10.received()).isEqualTo(1);
        assertThat(amqp10.deliveredConsumeManualAck()).isEqualTo(1);
        assertThat(amqp10.redelivered()).isEqualTo(1);
        assertThat(amqp10.acknowledged()).isEqualTo(1);
        assertThat(amqp10.bytesIn()).isEqualTo(100);
    }

    @Test
    void vhostTotalsAreItsClosedConnectionsAndTheOpenOnesGiven() {
        BrokerCounters broker = new BrokerCounters();
        ConnectionCounters closedOne = new ConnectionCounters(BrokerCounters.AMQP091);
        ConnectionCounters openOne = new ConnectionCounters(BrokerCounters.AMQP10);
        ConnectionCounters elsewhere = new ConnectionCounters(BrokerCounters.AMQP10);
        broker.opened(closedOne);
        broker.opened(openOne);
        broker.opened(elsewhere);
        closedOne.received(false);
        openOne.received(false);
        openOne.acknowledged(3);
        elsewhere.received(false);
        broker.closed(closedOne, "v");
        broker.closed(elsewhere, "w");

        BrokerCounters.Totals v = broker.vhostTotals("v", java.util.List.of(openOne));
        assertThat(v.received()).isEqualTo(2);
        assertThat(v.acknowledged()).isEqualTo(3);
        assertThat(BrokerCounters.of(openOne).acknowledged()).isEqualTo(3);

        broker.forgetVhost("v");
        assertThat(broker.vhostTotals("v", java.util.List.of()).received()).as("a deleted vhost's count").isZero();
        assertThat(broker.vhostTotals("w", java.util.List.of()).received()).isEqualTo(1);
    }
}
