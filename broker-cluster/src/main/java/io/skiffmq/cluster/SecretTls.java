package io.skiffmq.cluster;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * Mutual TLS whose trust is the cluster secret: how nodes prove to each other that they hold it (docs/cluster.md,
 * "The secret"). Each node makes a fresh P-256 key pair at start and a self-signed certificate for it that carries,
 * in a private extension, HMAC-SHA256(secret, the certificate's public key). Both ends of every connection present
 * their certificate and accept the other's only when that MAC is right. The TLS handshake proves the peer holds the
 * private key of the certificate it shows, so a node that lacks the secret can neither make an acceptable
 * certificate nor reuse one it saw: it cannot complete a handshake, and no Raft message of its reaches the server.
 * The secret itself never crosses the network. Immutable; the managers are called on the transport's threads.
 */
final class SecretTls {
    /** A UUID arc (X.667), so no registered number is needed: {@code 2.25.<uuid as an integer>}. */
    static final String MAC_EXTENSION = "2.25." + new BigInteger("5f1c0a3e9b7d4c2a8e6f0b1d3c5a7e91", 16);
    private static final byte[] MAC_CONTEXT = "skiffmq cluster certificate v1\0".getBytes(StandardCharsets.US_ASCII);
    private static final String ALIAS = "skiffmq-node";
    private static final String ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
    private static final String COMMON_NAME = "2.5.4.3";

    private final ClusterSecret secret;
    private final PrivateKey privateKey;
    private final X509Certificate certificate;

    SecretTls(ClusterSecret secret, String nodeName) {
        this.secret = secret;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair pair = generator.generateKeyPair();
            this.privateKey = pair.getPrivate();
            this.certificate = selfSigned(pair, nodeName);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot make the node's TLS certificate", e);
        }
    }

    /** The configuration for Ratis' gRPC server and clients: this node's certificate, checked both ways. */
    GrpcTlsConfig grpcConfig() {
        return new GrpcTlsConfig(new KeyManager(), new TrustManager(), true);
    }

    /** The same certificate and check, for the node's message traffic (not Ratis'). */
    NodeTls nodeTls() {
        return new NodeTls(new KeyManager(), new TrustManager());
    }

    X509Certificate certificate() {
        return certificate;
    }

    private X509Certificate selfSigned(KeyPair pair, String nodeName) throws GeneralSecurityException {
        byte[] publicKey = pair.getPublic().getEncoded();
        byte[] algorithm = Der.sequence(Der.oid(ECDSA_WITH_SHA256));
        byte[] name = Der.sequence(Der.set(Der.sequence(Der.oid(COMMON_NAME), Der.utf8(nodeName))));
        byte[] serial = new byte[16];
        new SecureRandom().nextBytes(serial);
        byte[] macExtension = Der.sequence(Der.oid(MAC_EXTENSION),
            Der.octetString(Der.octetString(expectedMac(publicKey))));
        byte[] tbs = Der.sequence(
            Der.explicit(0, Der.integer(BigInteger.TWO)),
            Der.integer(new BigInteger(1, serial)),
            algorithm,
            name,
            // trust comes from the MAC, not from dates: valid from 2020 to the end of time (RFC 5280 4.1.2.5)
            Der.sequence(Der.utcTime("200101000000Z"), Der.generalizedTime("99991231235959Z")),
            name,
            publicKey,
            Der.explicit(3, Der.sequence(macExtension)));
        Signature signer = Signature.getInstance("SHA256withECDSA");
        signer.initSign(pair.getPrivate());
        signer.update(tbs);
        byte[] der = Der.sequence(tbs, algorithm, Der.bitString(signer.sign()));
        return (X509Certificate) CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(der));
    }

    private byte[] expectedMac(byte[] encodedPublicKey) {
        return secret.mac(Der.concat(MAC_CONTEXT, encodedPublicKey));
    }

    /**
     * @throws CertificateException unless {@code chain}'s first certificate carries the MAC of its own public key
     *         under this cluster's secret
     */
    void check(X509Certificate[] chain) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException("the peer presented no certificate");
        }
        X509Certificate peer = chain[0];
        byte[] extension = peer.getExtensionValue(MAC_EXTENSION);
        byte[] expected = expectedMac(peer.getPublicKey().getEncoded());
        // the extension's value is an OCTET STRING holding our OCTET STRING of 32 bytes
        if (extension == null || extension.length != 36
                || !MessageDigest.isEqual(Arrays.copyOfRange(extension, 4, 36), expected)) {
            throw new CertificateException("the peer " + peer.getSubjectX500Principal().getName()
                + " does not hold this cluster's secret");
        }
        try {
            peer.verify(peer.getPublicKey());
        } catch (GeneralSecurityException e) {
            throw new CertificateException("the peer's certificate is not signed by its own key", e);
        }
    }

    /** Presents this node's certificate, client and server side alike. */
    private final class KeyManager extends X509ExtendedKeyManager {
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return keyType.startsWith("EC") ? new String[] {ALIAS} : null;
        }

        @Override
        public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
            return Arrays.stream(keyTypes).anyMatch(t -> t.startsWith("EC")) ? ALIAS : null;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
            return chooseClientAlias(keyTypes, issuers, null);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return keyType.startsWith("EC") ? ALIAS : null;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return chooseServerAlias(keyType, issuers, null);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return ALIAS.equals(alias) ? new X509Certificate[] {certificate} : null;
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return ALIAS.equals(alias) ? privateKey : null;
        }
    }

    /**
     * Accepts a peer by its certificate's MAC alone. Extended, so that no TLS stack adds a host name check of its
     * own: node names are not DNS names, and the secret is the identity.
     */
    private final class TrustManager extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(chain);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
