package io.skiffmq.codec.stream;

import java.util.Locale;

/**
 * The commands of RabbitMQ's stream protocol (PROTOCOL.adoc, {@code rabbit_stream.hrl}), each with its key, the
 * highest version RabbitMQ accepts and who sends it. Part of the protocol: the keys cannot change. On the wire a
 * response carries its request's key with the high bit set ({@link #RESPONSE_FLAG}): subscribe is {@code 0x0007},
 * its response {@code 0x8007}. Names are RabbitMQ's ({@code rabbit_stream_core:command_id/1}).
 */
public enum CommandKey {
    DECLARE_PUBLISHER(0x01, 1, Peer.CLIENT, true),
    PUBLISH(0x02, 2, Peer.CLIENT, false),
    PUBLISH_CONFIRM(0x03, 1, Peer.SERVER, false),
    PUBLISH_ERROR(0x04, 1, Peer.SERVER, false),
    QUERY_PUBLISHER_SEQUENCE(0x05, 1, Peer.CLIENT, true),
    DELETE_PUBLISHER(0x06, 1, Peer.CLIENT, true),
    SUBSCRIBE(0x07, 1, Peer.CLIENT, true),
    DELIVER(0x08, 2, Peer.SERVER, false),
    /** Its response (no correlation id) is sent only for a problem, such as an unknown subscription. */
    CREDIT(0x09, 1, Peer.CLIENT, true),
    STORE_OFFSET(0x0a, 1, Peer.CLIENT, false),
    QUERY_OFFSET(0x0b, 1, Peer.CLIENT, true),
    UNSUBSCRIBE(0x0c, 1, Peer.CLIENT, true),
    CREATE_STREAM(0x0d, 1, Peer.CLIENT, true),
    DELETE_STREAM(0x0e, 1, Peer.CLIENT, true),
    METADATA(0x0f, 1, Peer.CLIENT, true),
    METADATA_UPDATE(0x10, 1, Peer.SERVER, false),
    PEER_PROPERTIES(0x11, 1, Peer.CLIENT, true),
    SASL_HANDSHAKE(0x12, 1, Peer.CLIENT, true),
    SASL_AUTHENTICATE(0x13, 1, Peer.CLIENT, true),
    /**
     * The server proposes, the client answers with the response key. RabbitMQ's reader also takes the answer
     * under the request key ({@code rabbit_stream_core:parse_request}), so both ends may send the request.
     */
    TUNE(0x14, 1, null, true),
    OPEN(0x15, 1, Peer.CLIENT, true),
    /** Either end closes; the other answers. */
    CLOSE(0x16, 1, null, true),
    HEARTBEAT(0x17, 1, null, false),
    ROUTE(0x18, 1, Peer.CLIENT, true),
    PARTITIONS(0x19, 1, Peer.CLIENT, true),
    /** A request from the server (single active consumer); the client answers with an offset specification. */
    CONSUMER_UPDATE(0x1a, 1, Peer.SERVER, true),
    EXCHANGE_COMMAND_VERSIONS(0x1b, 1, Peer.CLIENT, true),
    STREAM_STATS(0x1c, 1, Peer.CLIENT, true),
    CREATE_SUPER_STREAM(0x1d, 1, Peer.CLIENT, true),
    DELETE_SUPER_STREAM(0x1e, 1, Peer.CLIENT, true),
    RESOLVE_OFFSET_SPEC(0x1f, 1, Peer.CLIENT, true);

    /** The bit that marks a response's key. */
    public static final int RESPONSE_FLAG = 0x8000;

    private static final CommandKey[] BY_KEY = new CommandKey[0x20];

    static {
        for (CommandKey k : values()) {
            BY_KEY[k.key] = k;
        }
    }

    private final int key;
    private final int maxVersion;
    /** Who sends the request; null for both ends. */
    private final Peer requester;
    private final boolean hasResponse;

    CommandKey(int key, int maxVersion, Peer requester, boolean hasResponse) {
        this.key = key;
        this.maxVersion = maxVersion;
        this.requester = requester;
        this.hasResponse = hasResponse;
    }

    /** The key of the request (or one-way command), without {@link #RESPONSE_FLAG}. */
    public int key() {
        return key;
    }

    /** The key of the response. */
    public int responseKey() {
        return key | RESPONSE_FLAG;
    }

    /** Versions run from 1 to this; RabbitMQ parses no other. */
    public int maxVersion() {
        return maxVersion;
    }

    /** RabbitMQ's name for the command, as in its logs and {@code command_versions}: {@code declare_publisher}. */
    public String protocolName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The command for a key, response flag ignored; null for a key the protocol does not define. */
    public static CommandKey of(int wireKey) {
        int key = wireKey & ~RESPONSE_FLAG;
        return key < BY_KEY.length ? BY_KEY[key] : null;
    }

    /**
     * True when {@code sender} may send a frame with this key (response flag included) and version. Versions above
     * 1 exist only for requests (publish v2, deliver v2); every response is version 1.
     */
    public static boolean accepts(Peer sender, int wireKey, int version) {
        CommandKey command = of(wireKey);
        if (command == null || version < 1) {
            return false;
        }
        if ((wireKey & RESPONSE_FLAG) != 0) {
            return command.hasResponse && version == 1 && (command.requester == null || command.requester != sender);
        }
        return version <= command.maxVersion && (command.requester == null || command.requester == sender);
    }
}
