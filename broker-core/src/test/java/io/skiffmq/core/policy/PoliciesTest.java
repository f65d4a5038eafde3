package io.skiffmq.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.queue.QueueArguments;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.StreamArguments;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which policy applies, as {@code rabbit_policy:match/2} picks it, the operator policy's merge, the checks of a
 * definition in RabbitMQ's words, and what a queue or stream ends up acting on.
 */
class PoliciesTest {
    private static Policy policy(String name, String pattern, ApplyTo applyTo, Number priority,
            Map<String, Object> definition) {
        return new Policy(name, pattern, applyTo, priority, definition);
    }

    @Test
    void theHighestPriorityMatchingPolicyAppliesWhole() {
        Policies policies = Policies.NONE
            .with(policy("low", "^orders", ApplyTo.ALL, 1, Map.of("max-length", 1, "message-ttl", 5)), false)
            .with(policy("high", "ders", ApplyTo.QUEUES, 2.5, Map.of("max-length", 9)), false)
            .with(policy("other", "^invoices$", ApplyTo.ALL, 10, Map.of("expires", 1)), false);
        assertThat(policies.forQueue("orders", QueueType.CLASSIC))
            .isEqualTo(new EffectivePolicy("high", null, Map.of("max-length", 9L)));
        assertThat(policies.forQueue("my-orders", QueueType.CLASSIC).policy()).as("a search, not a whole match")
            .isEqualTo("high");
        assertThat(policies.forExchange("orders").policy()).as("queues only: the next one").isEqualTo("low");
        assertThat(policies.forQueue("invoices-2", QueueType.CLASSIC)).isEqualTo(EffectivePolicy.NONE);
        assertThat(policies.without("high", false).forQueue("orders", QueueType.CLASSIC).definition())
            .isEqualTo(Map.of("max-length", 1L, "message-ttl", 5L));
        assertThat(policies.list(false)).extracting(Policy::name).containsExactly("low", "high", "other");
    }

    @Test
    void equalPrioritiesGoByName() {
        Policies policies = Policies.NONE.with(policy("b", ".*", ApplyTo.ALL, 0, Map.of("max-length", 2)), false)
            .with(policy("a", ".*", ApplyTo.ALL, 0, Map.of("max-length", 1)), false);
        assertThat(policies.forQueue("q", QueueType.CLASSIC).policy()).isEqualTo("a");
    }

    @Test
    void aPolicyWithAKeyTheQueueTypeLacksIsSkipped() {
        Policies policies = Policies.NONE
            .with(policy("stream", ".*", ApplyTo.ALL, 5, Map.of("max-age", "1D")), false)
            .with(policy("classic", ".*", ApplyTo.ALL, 1, Map.of("message-ttl", 10)), false)
            .with(policy("limit", ".*", ApplyTo.CLASSIC_QUEUES, 3, Map.of("delivery-limit", 3)), false);
        assertThat(policies.forQueue("q", QueueType.CLASSIC).policy()).as("our classic queues take delivery-limit")
            .isEqualTo("limit");
        assertThat(policies.forQueue("s", QueueType.STREAM).policy()).isEqualTo("stream");
        assertThat(policies.forExchange("x").policy()).as("exchanges skip nothing").isEqualTo("stream");
        Policies streamsOnly = Policies.NONE.with(policy("ttl", ".*", ApplyTo.STREAMS, 1,
            Map.of("message-ttl", 10)), false);
        assertThat(streamsOnly.forQueue("s", QueueType.STREAM)).isEqualTo(EffectivePolicy.NONE);
    }

    @Test
    void anOperatorPolicyMergesKeyByKeyTheStricterWinning() {
        Policies policies = Policies.NONE
            .with(policy("user", ".*", ApplyTo.ALL, 0, Map.of("max-length", 10, "message-ttl", 100,
                "delivery-limit", 5, "dead-letter-exchange", "dlx")), false)
            .with(policy("op", ".*", ApplyTo.QUEUES, 0, Map.of("max-length", 3, "message-ttl", 1_000,
                "expires", 60_000, "delivery-limit", -1)), true);
        EffectivePolicy effective = policies.forQueue("q", QueueType.CLASSIC);
        assertThat(effective.policy()).isEqualTo("user");
        assertThat(effective.operatorPolicy()).isEqualTo("op");
        assertThat(effective.definition()).containsExactly(Map.entry("dead-letter-exchange", "dlx"),
            Map.entry("delivery-limit", 5L), Map.entry("expires", 60_000L), Map.entry("max-length", 3L),
            Map.entry("message-ttl", 100L));
        assertThat(policies.forExchange("x")).as("the operator policy is for queues")
            .isEqualTo(new EffectivePolicy("user", null, Map.of("max-length", 10L, "message-ttl", 100L,
                "delivery-limit", 5L, "dead-letter-exchange", "dlx")));
    }

    @Test
    void definitionsAreCheckedInRabbitMqsWords() {
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of(), false))
            .hasMessage("no policy provided");
        assertThatThrownBy(() -> Policy.checked("p", "(", ApplyTo.ALL, 0, Map.of("max-length", 1L), false))
            .hasMessageStartingWith("pattern should be regular expression but is invalid");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("zz", 1L, "aa", "x",
            "max-length", 1L), false)).hasMessage("[{<<\"aa\">>,<<\"x\">>},{<<\"zz\">>,1}] are not recognised"
                + " policy settings");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("expires", 0L, "foo", 1L),
            false)).as("bad values before unknown keys").hasMessage("0 is not a valid queue expiry");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("max-age", "1X"), false))
            .hasMessage("<<\"1X\">> is not a valid max age");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("overflow", "drop"), false))
            .hasMessage("<<\"drop\">> is not a valid overflow value");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("max-length", 1.5), false))
            .hasMessage("1.5 is not a valid maximum length");
        assertThatThrownBy(() -> Policy.checked("p", "^q", ApplyTo.ALL, 0, Map.of("overflow", "drop-head"), true))
            .hasMessage("[{<<\"overflow\">>,<<\"drop-head\">>}] are not recognised policy settings");
        assertThatThrownBy(() -> ApplyTo.of("bogus")).hasMessage("apply-to 'bogus' unrecognised; should be one of:"
            + " 'queues', 'classic_queues',  'quorum_queues', 'streams', 'exchanges', or 'all'");
        for (String key : PolicyKeys.OPERATOR_KEYS) {
            assertThat(Policy.checked("p", ".*", ApplyTo.ALL, 0, Map.of(key, 1), true).definition())
                .containsEntry(key, 1L);
        }
    }

    @Test
    void aClassicQueueTakesTheSmallerLimitAndItsOwnDeadLetteringAndOverflow() {
        QueueArguments declared = QueueArguments.of("/", "q", Map.of("x-max-length", 5L, "x-message-ttl", 100L,
            "x-overflow", "reject-publish"));
        EffectivePolicy policy = new EffectivePolicy("p", null, Map.of("max-length", 9L, "message-ttl", 50L,
            "overflow", "drop-head", "dead-letter-exchange", "dlx", "dead-letter-routing-key", "dead",
            "max-length-bytes", 1_000L, "expires", 10_000L, "delivery-limit", 3L));
        QueueArguments inEffect = declared.withPolicy(Map.of("x-max-length", 5L, "x-message-ttl", 100L,
            "x-overflow", "reject-publish"), policy);
        assertThat(inEffect.maxLength()).isEqualTo(5);
        assertThat(inEffect.messageTtl()).isEqualTo(50);
        assertThat(inEffect.overflow()).isEqualTo(QueueArguments.Overflow.REJECT_PUBLISH);
        assertThat(inEffect.deadLetterExchange()).isEqualTo("dlx");
        assertThat(inEffect.deadLetterRoutingKey()).isEqualTo("dead");
        assertThat(inEffect.maxLengthBytes()).isEqualTo(1_000);
        assertThat(inEffect.expires()).isEqualTo(10_000);
        assertThat(inEffect.deliveryLimit()).isEqualTo(3);
        QueueArguments withDlx = QueueArguments.of("/", "q", Map.of("x-dead-letter-exchange", "mine"));
        assertThat(withDlx.withPolicy(Map.of("x-dead-letter-exchange", "mine"), policy).deadLetterExchange())
            .isEqualTo("mine");
        assertThat(declared.withPolicy(Map.of(), EffectivePolicy.NONE)).isSameAs(declared);
    }

    @Test
    void aStreamTakesItsPolicysRetention() {
        StreamArguments declared = StreamArguments.of("/", "s", Map.of("x-queue-type", "stream",
            "x-max-length-bytes", 1_000_000L, "x-max-age", "2D"));
        StreamArguments inEffect = declared.withPolicy(new EffectivePolicy("p", null, Map.of("max-length-bytes",
            5_000L, "stream-max-segment-size-bytes", 2_000L)));
        assertThat(inEffect.maxLengthBytes()).as("the policy wins").isEqualTo(5_000);
        assertThat(inEffect.maxAgeMillis()).isEqualTo(2 * 24 * 3_600_000L);
        assertThat(inEffect.maxSegmentSizeBytes()).isEqualTo(2_000);
        assertThat(declared.withPolicy(new EffectivePolicy("p", null, Map.of("max-age", "1h"))).maxAgeMillis())
            .isEqualTo(3_600_000L);
    }
}
