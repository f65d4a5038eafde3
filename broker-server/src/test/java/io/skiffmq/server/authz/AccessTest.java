package io.skiffmq.server.authz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange.PermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.PermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.UserPut;
import io.skiffmq.core.definitions.DefinitionChange.VhostLimitsSet;
import io.skiffmq.store.definitions.BrokerDefinitionsStore;
import io.skiffmq.store.definitions.ChangeLog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RabbitMQ's permission semantics, without a network: what an expression grants and when answers are redone. */
class AccessTest {
    @TempDir
    Path dir;
    private final List<BrokerDefinitionsStore> stores = new ArrayList<>();

    @AfterEach
    void closeStores() {
        stores.forEach(BrokerDefinitionsStore::close);
    }

    private AccessControl control(String configure, String write, String read) {
        BrokerDefinitions definitions = new BrokerDefinitions(List.of(new VhostDefinition("/", -1, -1)),
            List.of(new UserDefinition("u", "hash", "algorithm", List.of(), -1, -1)),
            List.of(new PermissionDefinition("u", "/", configure, write, read)), List.of());
        BrokerDefinitionsStore store = BrokerDefinitionsStore.open(dir.resolve("store-" + stores.size()),
            ChangeLog.Compaction.DEFAULTS,
            () -> definitions);
        stores.add(store);
        return new AccessControl(store::append, store.recovered(), null);
    }

    @Test
    void anExpressionIsSearchedForInTheName() {
        Access access = control("q", "^exact$", ".*").access("u", "/");
        assertThat(access.refusal(Permission.CONFIGURE, Access.Resource.QUEUE, "my-q-1")).isNull();
        assertThat(access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, "exact")).isNull();
        assertThat(access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, "not-exact"))
            .isEqualTo("write access to exchange 'not-exact' in vhost '/' refused for user 'u'");
    }

    @Test
    void caretDollarAndTheEmptyExpressionGrantNothing() {
        Access access = control("^$", "", ".*").access("u", "/");
        assertThat(access.refusal(Permission.CONFIGURE, Access.Resource.QUEUE, "q")).isNotNull();
        assertThat(access.refusal(Permission.WRITE, Access.Resource.QUEUE, "q")).isNotNull();
        assertThat(access.refusal(Permission.READ, Access.Resource.QUEUE, "q")).isNull();
    }

    @Test
    void theDefaultExchangeIsCheckedAsAmqDefault() {
        Access access = control(".*", "^amq\\.default$", ".*").access("u", "/");
        assertThat(access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, "")).isNull();
        assertThat(control(".*", "^x$", ".*").access("u", "/").refusal(Permission.WRITE, Access.Resource.EXCHANGE, ""))
            .isEqualTo("write access to exchange 'amq.default' in vhost '/' refused for user 'u'");
    }

    @Test
    void aChangeDropsTheCachedAnswers() {
        AccessControl control = control(".*", ".*", ".*");
        Access access = control.access("u", "/");
        assertThat(access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, "x")).isNull();
        control.update(new PermissionSet(new PermissionDefinition("u", "/", ".*", "^y$", ".*")));
        assertThat(access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, "x")).isNotNull();
        assertThat(control.mayAccess("u", "/")).isTrue();
        control.update(new PermissionCleared("u", "/"));
        assertThat(control.mayAccess("u", "/")).isFalse();
        assertThat(access.refusal(Permission.READ, Access.Resource.QUEUE, "q")).isNotNull();
    }

    @Test
    void topicPermissionsExpandTheUserAndVirtualHostAndApplyOnlyToTheirExchange() {
        AccessControl control = control(".*", ".*", ".*");
        control.update(new TopicPermissionSet(
            new TopicPermissionDefinition("u", "/", "amq.topic", "^{username}\\.{vhost}\\.", "^$")));
        Access access = control.access("u", "/");
        assertThat(access.hasTopicPermissions()).isTrue();
        assertThat(access.topicRefusal(Permission.WRITE, "amq.topic", "u./.news")).isNull();
        assertThat(access.topicRefusal(Permission.WRITE, "amq.topic", "v./.news"))
            .isEqualTo("write access to topic 'v./.news' in exchange 'amq.topic' in vhost '/' refused for user 'u'");
        assertThat(access.topicRefusal(Permission.READ, "amq.topic", "u./.news")).isNotNull();
        assertThat(access.topicRefusal(Permission.WRITE, "other.topic", "anything")).isNull();
    }

    @Test
    void anExpressionThatDoesNotCompileChangesNothing() {
        AccessControl control = control(".*", ".*", ".*");
        assertThatThrownBy(() -> control.update(new PermissionSet(new PermissionDefinition("u", "/", "(", ".*", ".*"))))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(control.definitions().permissions().get(0).configure()).isEqualTo(".*");
    }

    @Test
    void limitsCountAndFree() {
        AccessControl control = control(".*", ".*", ".*");
        control.update(new VhostLimitsSet("/", 1, -1),
            new UserPut(new UserDefinition("u", "hash", "algorithm", List.of(), -1, 1)));
        assertThat(control.connectionOpened("u", "/")).isNull();
        assertThat(control.connectionOpened("u", "/")).isEqualTo(new OverLimit(true, "/", "u", 1));
        control.connectionClosed("u", "/");
        assertThat(control.connectionOpened("u", "/")).isNull();
        assertThat(control.channelOpened("u")).isNull();
        assertThat(control.channelOpened("u")).contains("maximum allowed user limit of (1)");
        control.channelClosed("u");
        assertThat(control.channelOpened("u")).isNull();
    }
}
