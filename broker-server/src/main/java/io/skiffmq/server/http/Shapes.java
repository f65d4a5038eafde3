package io.skiffmq.server.http;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.policy.EffectivePolicy;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.server.authz.Access;
import io.netty.handler.ssl.SslHandler;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.connection.ConnectionDetails;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.net.SocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON objects of the API, field for field as RabbitMQ's management API names them, from what the broker
 * knows (no lookups here, but for addresses the connections hold). Rates ({@code message_stats}) are added by
 * the resources ({@link RateSampler}). Stateless.
 */
final class Shapes {
    private Shapes() {
    }

    /** @param counts the queue's counts, read on its thread ({@link Queue#counts}) */
    static Map<String, Object> queue(String vhost, Queue queue, QueueCounts counts, String node) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("name", queue.name());
        q.put("vhost", vhost);
        q.put("type", queue.type().alias());
        q.put("durable", queue.durable());
        q.put("auto_delete", queue.declaration().autoDelete());
        q.put("exclusive", queue.declaration().exclusive());
        q.put("arguments", JsonValues.of(queue.arguments()));
        q.put("node", node);
        q.put("state", "running");
        // a quorum queue's total counts what it holds to dead-letter, as rabbit_fifo's messages_total does
        q.put("messages", counts.ready() + counts.unacknowledged() + counts.deadLettering());
        q.put("messages_ready", counts.ready());
        q.put("messages_unacknowledged", counts.unacknowledged());
        q.put("consumers", counts.consumers());
        putPolicy(q, queue.policy());
        if (queue.type() == io.skiffmq.core.queue.QueueType.QUORUM) {
            // rabbit_quorum_queue's info keys: a group of one, this node leading
            q.put("leader", node);
            q.put("members", List.of(node));
            q.put("online", List.of(node));
            q.put("messages_dlx", counts.deadLettering());
        }
        if (queue instanceof io.skiffmq.core.stream.StreamQueue stream) {
            // rabbit_stream_queue's info keys (osiris' counters), one node leading with no replica; first_offset ours
            io.skiffmq.store.stream.StreamLog log = ((io.skiffmq.store.stream.StreamLogStore) stream.store()).log();
            q.put("leader", node);
            q.put("members", List.of(node));
            q.put("online", List.of(node));
            q.put("segments", log.segmentCount());
            q.put("committed_offset", log.committedOffset());
            q.put("committed_chunk_id", log.committedChunkId());
            q.put("first_offset", log.firstOffset());
        }
        return q;
    }

    /**
     * A queue homed on another node of the cluster, as this node knows it: its record, without the counts and
     * state its home node has.
     */
    static Map<String, Object> remoteQueue(String vhost,
            io.skiffmq.core.definitions.DefinitionChange.QueueHomed queue) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("name", queue.name());
        q.put("vhost", vhost);
        q.put("type", io.skiffmq.core.queue.QueueType.of(queue.arguments()).alias());
        q.put("durable", true);
        q.put("auto_delete", queue.autoDelete());
        q.put("exclusive", false);
        q.put("arguments", JsonValues.of(queue.arguments()));
        q.put("node", queue.node());
        return q;
    }

    static Map<String, Object> exchange(String vhost, Exchange exchange) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("name", exchange.name());
        e.put("vhost", vhost);
        e.put("type", exchange.type().value());
        e.put("durable", exchange.durable());
        e.put("auto_delete", exchange.autoDelete());
        e.put("internal", exchange.internal());
        e.put("arguments", JsonValues.of(exchange.arguments()));
        if (exchange.policy().policy() != null) {
            e.put("policy", exchange.policy().policy()); // RabbitMQ shows an exchange's only when it has one
        }
        return e;
    }

    /** A queue's {@code policy}, {@code operator_policy} (null for none) and {@code effective_policy_definition}. */
    private static void putPolicy(Map<String, Object> q, EffectivePolicy policy) {
        q.put("policy", policy.policy());
        q.put("operator_policy", policy.operatorPolicy());
        q.put("effective_policy_definition", policy.definition());
    }

    static Map<String, Object> binding(String vhost, Binding binding) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("source", binding.source());
        b.put("vhost", vhost);
        b.put("destination", binding.destination().name());
        b.put("destination_type", binding.destination().isExchange() ? "exchange" : "queue");
        b.put("routing_key", binding.key());
        b.put("arguments", JsonValues.of(binding.arguments()));
        b.put("properties_key", BindingKeys.propertiesKey(binding));
        return b;
    }

    /** RabbitMQ's connection name: {@code peer_host:peer_port -> host:port}. */
    static String connectionName(ClientConnection c) {
        return address(c.remoteAddress()) + " -> " + address(c.localAddress());
    }

    static Map<String, Object> connection(ClientConnection c, String node) {
        Map<String, Object> m = new LinkedHashMap<>();
        Access opened = c.opened();
        m.put("name", connectionName(c));
        m.put("node", node);
        m.put("type", "network");
        m.put("state", opened == null ? "starting" : "running");
        m.put("protocol", c.protocol());
        if (c.containerId() != null) {
            m.put("container_id", c.containerId()); // AMQP 1.0 only, as RabbitMQ shows it
        }
        m.put("user", opened == null ? null : opened.user());
        m.put("vhost", opened == null ? null : opened.vhost());
        putAddress(m, "host", "port", c.localAddress());
        putAddress(m, "peer_host", "peer_port", c.remoteAddress());
        m.put("client_properties", JsonValues.of(c.clientProperties()));
        ConnectionDetails details = c.details();
        m.put("auth_mechanism", details.authMechanism());
        m.put("frame_max", details.frameMax());
        m.put("channel_max", details.channelMax());
        m.put("timeout", details.heartbeatSeconds());
        m.put("connected_at", details.connectedAt());
        tls(m, c.socket());
        String userProvidedName = c.userProvidedName();
        if (userProvidedName != null) {
            m.put("user_provided_name", userProvidedName); // only when the client named it, as in RabbitMQ
        }
        return m;
    }

    /**
     * {@code ssl} and, over TLS, what RabbitMQ's {@code rabbit_ssl:info} shows: the protocol as it names it
     * ({@code tlsv1.3}), the cipher suite (the JDK's name, whole: RabbitMQ splits it into {@code ssl_key_exchange},
     * {@code ssl_cipher} and {@code ssl_hash}) and the peer's certificate, if any.
     */
    private static void tls(Map<String, Object> m, io.netty.channel.Channel socket) {
        SslHandler ssl = socket == null ? null : socket.pipeline().get(SslHandler.class);
        SSLSession session = ssl == null ? null : ssl.engine().getSession();
        m.put("ssl", ssl != null);
        m.put("ssl_protocol", session == null ? null : session.getProtocol().toLowerCase(java.util.Locale.ROOT));
        m.put("ssl_cipher", session == null ? null : session.getCipherSuite());
        X509Certificate peer = null;
        try {
            if (session != null && session.getPeerCertificates().length > 0
                    && session.getPeerCertificates()[0] instanceof X509Certificate x) {
                peer = x;
            }
        } catch (SSLPeerUnverifiedException e) {
            // no client certificate
        }
        m.put("peer_cert_subject", peer == null ? null : peer.getSubjectX500Principal().getName());
        m.put("peer_cert_issuer", peer == null ? null : peer.getIssuerX500Principal().getName());
        m.put("peer_cert_validity", peer == null ? null : peer.getNotBefore().toInstant() + " - "
            + peer.getNotAfter().toInstant());
    }

    private static void putAddress(Map<String, Object> m, String host, String port, SocketAddress address) {
        if (address instanceof InetSocketAddress a) {
            m.put(host, a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress());
            m.put(port, a.getPort());
        } else {
            m.put(host, null);
            m.put(port, null);
        }
    }

    private static String address(SocketAddress address) {
        if (address instanceof InetSocketAddress a) {
            return (a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress()) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    static Map<String, Object> vhost(VhostDefinition vhost, String node) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("name", vhost.name());
        v.put("description", vhost.description());
        v.put("tags", vhost.tags());
        v.put("default_queue_type", defaultQueueType(vhost));
        v.put("protected_from_deletion", vhost.protectedFromDeletion());
        v.put("metadata", vhostMetadata(vhost));
        v.put("tracing", false);
        v.put("cluster_state", Map.of(node, "running"));
        return v;
    }

    /** The type a queue declared without {@code x-queue-type} gets there, as RabbitMQ 4 shows it. */
    static String defaultQueueType(VhostDefinition vhost) {
        return vhost.defaultQueueType() == null ? "classic" : vhost.defaultQueueType();
    }

    /**
     * RabbitMQ's {@code metadata} of a virtual host: description, tags, default queue type, and
     * {@code protected_from_deletion} when it is protected.
     */
    static Map<String, Object> vhostMetadata(VhostDefinition vhost) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("description", vhost.description());
        metadata.put("tags", vhost.tags());
        metadata.put("default_queue_type", defaultQueueType(vhost));
        if (vhost.protectedFromDeletion()) {
            metadata.put("protected_from_deletion", true);
        }
        return metadata;
    }

    static Map<String, Object> user(UserDefinition user) {
        Map<String, Object> u = new LinkedHashMap<>();
        u.put("name", user.name());
        u.put("password_hash", user.passwordHash());
        u.put("hashing_algorithm", user.hashingAlgorithm());
        u.put("tags", user.tags());
        u.put("limits", userLimits(user));
        return u;
    }

    static Map<String, Object> userLimits(UserDefinition user) {
        Map<String, Object> limits = new LinkedHashMap<>();
        if (user.maxConnections() >= 0) {
            limits.put("max-connections", user.maxConnections());
        }
        if (user.maxChannels() >= 0) {
            limits.put("max-channels", user.maxChannels());
        }
        return limits;
    }

    static Map<String, Object> permission(PermissionDefinition p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", p.user());
        m.put("vhost", p.vhost());
        m.put("configure", p.configure());
        m.put("write", p.write());
        m.put("read", p.read());
        return m;
    }

    static Map<String, Object> topicPermission(TopicPermissionDefinition p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", p.user());
        m.put("vhost", p.vhost());
        m.put("exchange", p.exchange());
        m.put("write", p.write());
        m.put("read", p.read());
        return m;
    }

    static Map<String, Object> error(String error, String reason) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("error", error);
        m.put("reason", reason);
        return m;
    }
}
