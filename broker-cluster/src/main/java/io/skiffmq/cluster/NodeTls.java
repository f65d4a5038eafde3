package io.skiffmq.cluster;

import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * What a node's own message traffic to and from the other nodes (docs/cluster.md, "Messages between nodes") needs
 * to be mutual TLS whose trust is the cluster secret, as the Raft traffic is ({@link SecretTls}): this node's
 * certificate and key, and the check that a peer's certificate carries the secret's MAC. Immutable; the managers
 * are called on the transport's threads.
 */
public record NodeTls(X509ExtendedKeyManager keys, X509ExtendedTrustManager trust) {
}
