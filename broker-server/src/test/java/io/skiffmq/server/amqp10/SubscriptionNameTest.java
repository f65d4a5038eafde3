package io.skiffmq.server.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.qpid.proton.amqp.Symbol;
import org.junit.jupiter.api.Test;

/** Qpid JMS's link names for each kind of subscription, and the one queue each subscription maps to. */
class SubscriptionNameTest {
    private static final Symbol TOPIC = Symbol.valueOf("topic");
    private static final Symbol SHARED = Symbol.valueOf("shared");
    private static final Symbol GLOBAL = Symbol.valueOf("global");

    private static String queue(String linkName, boolean durable, Symbol... capabilities) {
        return SubscriptionName.of("client-1", linkName, capabilities, durable).queue();
    }

    @Test
    void everyLinkOfASharedDurableSubscriptionWithAClientIdMapsToTheNonSharedOnesQueue() {
        assertThat(queue("sub", true, TOPIC)).isEqualTo("jms-subscription:client-1:sub");
        assertThat(queue("sub", true, TOPIC, SHARED)).isEqualTo("jms-subscription:client-1:sub");
        assertThat(queue("sub|2", true, TOPIC, SHARED)).isEqualTo("jms-subscription:client-1:sub");
        assertThat(queue("sub|17", true, TOPIC, SHARED)).isEqualTo("jms-subscription:client-1:sub");
    }

    @Test
    void globalSubscriptionsIgnoreTheContainerId() {
        assertThat(queue("sub|global", true, TOPIC, SHARED, GLOBAL)).isEqualTo("jms-subscription-global:sub");
        assertThat(queue("sub|global2", true, TOPIC, SHARED, GLOBAL)).isEqualTo("jms-subscription-global:sub");
        assertThat(SubscriptionName.of("other", "sub|global3", new Symbol[] {SHARED, GLOBAL}, true).queue())
            .isEqualTo("jms-subscription-global:sub");
    }

    @Test
    void sharedNonDurableSubscriptionsHaveTheirOwnQueues() {
        assertThat(queue("sub|volatile1", false, TOPIC, SHARED)).isEqualTo("jms-shared-subscription:client-1:sub");
        assertThat(queue("sub|volatile2", false, TOPIC, SHARED)).isEqualTo("jms-shared-subscription:client-1:sub");
        assertThat(queue("sub|global-volatile1", false, TOPIC, SHARED, GLOBAL))
            .isEqualTo("jms-shared-subscription-global:sub");
    }

    @Test
    void aNonSharedLinkIsNamedByItsWholeName() {
        assertThat(queue("a|b", true, TOPIC)).isEqualTo("jms-subscription:client-1:a|b");
        assertThat(queue("sub", true, TOPIC, GLOBAL)).as("global without shared means nothing")
            .isEqualTo("jms-subscription:client-1:sub");
    }

    @Test
    void qpidJmsUnsubscribeNamesTheFirstLink() {
        assertThat(SubscriptionName.unsubscribing("client-1", "sub", null).queue())
            .isEqualTo("jms-subscription:client-1:sub");
        assertThat(SubscriptionName.unsubscribing("ID:x", "sub|global", new Symbol[] {SHARED, GLOBAL}).queue())
            .isEqualTo("jms-subscription-global:sub");
    }
}
