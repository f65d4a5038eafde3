package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.policy.EffectivePolicy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A quorum queue's arguments as RabbitMQ 4.0 reads them, with its defaults and its policy precedence. */
class QuorumArgumentsTest {
    private static QueueArguments read(Map<String, Object> arguments) {
        return QuorumArguments.of("/", "q", arguments, false);
    }

    private static QueueArguments withPolicy(Map<String, Object> arguments, Map<String, Object> policy) {
        return QuorumArguments.withPolicy(read(arguments), arguments, new EffectivePolicy("p", null, policy));
    }

    @Test
    void theDeliveryLimitIs20UnlessDeclaredAndNegativeMeansNone() {
        assertThat(read(Map.of("x-queue-type", "quorum")).deliveryLimit()).isEqualTo(20);
        assertThat(read(Map.of("x-delivery-limit", 3)).deliveryLimit()).isEqualTo(3);
        assertThat(read(Map.of("x-delivery-limit", 0)).deliveryLimit()).isZero();
        assertThat(read(Map.of("x-delivery-limit", -5)).deliveryLimit()).isEqualTo(-1);
    }

    @Test
    void rejectPublishDlxActsAsDropHead() {
        assertThat(read(Map.of("x-overflow", "reject-publish-dlx")).overflow())
            .isEqualTo(QueueArguments.Overflow.DROP_HEAD);
        assertThat(read(Map.of("x-overflow", "reject-publish")).overflow())
            .isEqualTo(QueueArguments.Overflow.REJECT_PUBLISH);
    }

    @Test
    void policiesApplyByGatherPolicyConfigsPrecedence() {
        // delivery-limit: the smaller of two limits, the larger when either is negative (none)
        assertThat(withPolicy(Map.of(), Map.of("delivery-limit", 5)).deliveryLimit()).isEqualTo(5);
        assertThat(withPolicy(Map.of("x-delivery-limit", 3), Map.of("delivery-limit", 5)).deliveryLimit())
            .isEqualTo(3);
        assertThat(withPolicy(Map.of("x-delivery-limit", -1), Map.of("delivery-limit", 5)).deliveryLimit())
            .isEqualTo(5);
        assertThat(withPolicy(Map.of("x-delivery-limit", 3), Map.of("delivery-limit", -1)).deliveryLimit())
            .isEqualTo(3);
        // the smaller length limit; the policy's overflow; the argument's dead-letter exchange
        QueueArguments a = withPolicy(Map.of("x-max-length", 10, "x-overflow", "drop-head",
            "x-dead-letter-exchange", "mine"), Map.of("max-length", 20, "overflow", "reject-publish",
            "dead-letter-exchange", "theirs"));
        assertThat(a.maxLength()).isEqualTo(10);
        assertThat(a.overflow()).isEqualTo(QueueArguments.Overflow.REJECT_PUBLISH);
        assertThat(a.deadLetterExchange()).isEqualTo("mine");
        assertThat(withPolicy(Map.of(), Map.of("dead-letter-exchange", "theirs", "message-ttl", 5))
            .messageTtl()).isEqualTo(5);
    }
}
