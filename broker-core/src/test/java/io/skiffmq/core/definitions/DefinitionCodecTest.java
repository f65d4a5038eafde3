package io.skiffmq.core.definitions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange.*;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import io.skiffmq.core.definitions.DefinitionChange.PolicyCleared;
import io.skiffmq.core.definitions.DefinitionChange.PolicySet;
import io.skiffmq.core.policy.ApplyTo;
import io.skiffmq.core.policy.Policy;
import org.junit.jupiter.api.Test;

/** Every kind of change comes back equal from its bytes, arguments with their AMQP types. */
class DefinitionCodecTest {
    static List<DefinitionChange> everyKind() {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("x-max-length", 10L);
        arguments.put("flag", Symbol.valueOf("s"));
        arguments.put("count", UnsignedInteger.valueOf(7));
        arguments.put("present", null);
        arguments.put("nested", Map.of("a", List.of(1, "b")));
        Binding binding = new Binding("x", Destination.exchange("y"), "a.#", arguments);
        return List.of(
            new QueueDeclared("q", 42, true, arguments),
            new QueueDeleted("q"),
            new QueueHomed("q", false, arguments, "skiffmq@host-b", -7L),
            new InVhost("/", new QueueHomed("q", true, Map.of(), "a@127.0.0.1", 42L)),
            new QueueDeclared("q", 42, false, Map.of(), 1234567890123L),
            new ExchangeDeclared(new Exchange("x", Exchange.Type.LOCAL_RANDOM, true, true, true, arguments)),
            new ExchangeDeleted("x"),
            new BindingAdded(binding),
            new BindingRemoved(new Binding("x", Destination.queue("q"), "", Map.of())),
            new NextQueueId(43),
            new InVhost("/", new BindingAdded(binding)),
            new VhostAdded(new VhostDefinition("v", 5, -1)),
            new VhostAdded(new VhostDefinition("w", -1, 7, "prod", List.of("eu", "a"), "stream")),
            new VhostMetadataSet("v", "described", List.of("t"), "quorum"),
            new VhostMetadataSet("v", "", List.of(), null),
            new VhostAdded(new VhostDefinition("p", -1, -1, "", List.of(), "quorum", true)),
            new VhostMetadataSet("p", "kept", List.of(), null, true),
            new GlobalParameterSet(new BrokerDefinitions.GlobalParameterDefinition("cluster_tags", "{\"a\":[1]}")),
            new GlobalParameterCleared("cluster_tags"),
            new VhostDeleted("v"),
            new VhostLimitsSet("v", -1, 100),
            new UserPut(new UserDefinition("u", "hash", "rabbit_password_hashing_sha256", List.of("a", "b"), 3, -1)),
            new UserDeleted("u"),
            new PermissionSet(new PermissionDefinition("u", "v", ".*", "^w", "")),
            new PermissionCleared("u", "v"),
            new TopicPermissionSet(new TopicPermissionDefinition("u", "v", "amq.topic", "^{username}", ".*")),
            new TopicPermissionCleared("u", "v", "amq.topic"),
            new TopicPermissionCleared("u", "v", null),
            new PolicySet(new Policy("p", "^q", ApplyTo.CLASSIC_QUEUES, 3, Map.of("max-length", 5L,
                "dead-letter-exchange", "dlx")), false),
            new PolicySet(new Policy("o", ".*", ApplyTo.ALL, 1.5, Map.of("expires", 1_000L)), true),
            new PolicyCleared("p", false),
            new PolicyCleared("o", true));
    }

    @Test
    void everyKindRoundTrips() {
        for (DefinitionChange change : everyKind()) {
            assertThat(DefinitionCodec.decode(ByteBuffer.wrap(DefinitionCodec.encode(change)))).isEqualTo(change);
        }
    }

    @Test
    void aVhostAddedBeforeMetadataWasKeptHasNone() {
        // kind 17 as written before: [17, name, max-connections, max-queues]
        org.apache.qpid.proton.codec.Data data = org.apache.qpid.proton.codec.Data.Factory.create();
        data.putObject(List.of(17, "old", 3L, -1L));
        org.apache.qpid.proton.amqp.Binary bytes = data.encode();
        assertThat(DefinitionCodec.decode(ByteBuffer.wrap(bytes.getArray(), bytes.getArrayOffset(),
            bytes.getLength()))).isEqualTo(new VhostAdded(new VhostDefinition("old", 3, -1, "", List.of(), null)));
    }

    @Test
    void metadataWrittenBeforeDeletionProtectionIsUnprotected() {
        // kinds 17 and 30 as written before protected_from_deletion was kept
        org.apache.qpid.proton.codec.Data added = org.apache.qpid.proton.codec.Data.Factory.create();
        added.putObject(java.util.Arrays.asList(17, "old", 3L, -1L, "d", List.of("t"), "quorum"));
        org.apache.qpid.proton.amqp.Binary bytes = added.encode();
        assertThat(DefinitionCodec.decode(ByteBuffer.wrap(bytes.getArray(), bytes.getArrayOffset(),
            bytes.getLength()))).isEqualTo(new VhostAdded(new VhostDefinition("old", 3, -1, "d", List.of("t"),
                "quorum", false)));
        org.apache.qpid.proton.codec.Data set = org.apache.qpid.proton.codec.Data.Factory.create();
        set.putObject(java.util.Arrays.asList(30, "old", "d", List.of(), null));
        bytes = set.encode();
        assertThat(DefinitionCodec.decode(ByteBuffer.wrap(bytes.getArray(), bytes.getArrayOffset(),
            bytes.getLength()))).isEqualTo(new VhostMetadataSet("old", "d", List.of(), null, false));
    }

    @Test
    void aChangeIsSmall() {
        byte[] bytes = DefinitionCodec.encode(new QueueDeclared("orders-00001", 1, false,
            Map.of("x-queue-type", "classic")));
        assertThat(bytes.length).isLessThan(64);
    }

    @Test
    void bytesThatAreNoChangeAreRefused() {
        assertThatThrownBy(() -> DefinitionCodec.decode(ByteBuffer.wrap(new byte[] {0x45})))
            .isInstanceOf(IllegalArgumentException.class);
        byte[] unknownKind = DefinitionCodec.encode(new QueueDeleted("q"));
        unknownKind[unknownKind.length - 4] = 99; // the kind, before the name "q" (a1 01 71)
        assertThatThrownBy(() -> DefinitionCodec.decode(ByteBuffer.wrap(unknownKind)))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void brokerDefinitionsApplyCascadesAndRebuildFromTheirChanges() {
        BrokerDefinitions d = BrokerDefinitions.EMPTY;
        for (DefinitionChange change : List.of(new VhostAdded(new VhostDefinition("v", -1, -1)),
                new VhostAdded(new VhostDefinition("w", -1, -1)),
                new UserPut(new UserDefinition("u", "h", "a", List.of(), -1, -1)),
                new PermissionSet(new PermissionDefinition("u", "v", ".*", ".*", ".*")),
                new PermissionSet(new PermissionDefinition("u", "w", ".*", ".*", ".*")),
                new TopicPermissionSet(new TopicPermissionDefinition("u", "v", "t", ".*", ".*")),
                new VhostLimitsSet("w", 1, 2), new VhostDeleted("v"))) {
            d = d.apply((DefinitionChange.BrokerChange) change);
        }
        assertThat(d.vhosts()).containsExactly(new VhostDefinition("w", 1, 2));
        assertThat(d.permissions()).extracting(PermissionDefinition::vhost).containsExactly("w");
        assertThat(d.topicPermissions()).isEmpty();
        BrokerDefinitions rebuilt = BrokerDefinitions.EMPTY;
        for (DefinitionChange.BrokerChange change : d.changes()) {
            rebuilt = rebuilt.apply(change);
        }
        assertThat(rebuilt).isEqualTo(d);
        assertThat(d.apply(new UserDeleted("u")).permissions()).isEmpty();
    }
}
