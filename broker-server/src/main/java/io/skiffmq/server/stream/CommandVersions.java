package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ConnectionCommand.CommandVersion;
import io.skiffmq.codec.stream.ConnectionCommand.ExchangeCommandVersions;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code exchange_command_versions}: the versions we answer are RabbitMQ's ({@code
 * rabbit_stream_utils:command_versions/0}, with {@code resolve_offset_spec}): publish 1 to 2, 1 for the rest a
 * client sends. The client's list decides the deliver version, 2 (with the committed chunk id) when it says 2.
 */
final class CommandVersions {
    /** What a server answers. */
    static final List<CommandVersion> SERVER;

    static {
        List<CommandVersion> versions = new ArrayList<>();
        for (CommandKey key : List.of(CommandKey.DECLARE_PUBLISHER, CommandKey.PUBLISH,
                CommandKey.QUERY_PUBLISHER_SEQUENCE, CommandKey.DELETE_PUBLISHER, CommandKey.SUBSCRIBE,
                CommandKey.CREDIT, CommandKey.STORE_OFFSET, CommandKey.QUERY_OFFSET, CommandKey.UNSUBSCRIBE,
                CommandKey.CREATE_STREAM, CommandKey.DELETE_STREAM, CommandKey.METADATA, CommandKey.CLOSE,
                CommandKey.HEARTBEAT, CommandKey.ROUTE, CommandKey.PARTITIONS, CommandKey.STREAM_STATS,
                CommandKey.CREATE_SUPER_STREAM, CommandKey.DELETE_SUPER_STREAM, CommandKey.RESOLVE_OFFSET_SPEC)) {
            versions.add(new CommandVersion(key.key(), 1, key.maxVersion()));
        }
        SERVER = List.copyOf(versions);
    }

    private CommandVersions() {
    }

    /** The deliver version for a client that sent {@code exchange}: 2 when it lists deliver up to 2, else 1. */
    static int deliverVersion(ExchangeCommandVersions exchange) {
        for (CommandVersion v : exchange.versions()) {
            if (v.key() == CommandKey.DELIVER.key() && v.maxVersion() == 2) {
                return 2;
            }
        }
        return 1;
    }
}
