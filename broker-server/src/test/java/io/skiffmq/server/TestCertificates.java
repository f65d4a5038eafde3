package io.skiffmq.server;

import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Certificates for TLS tests, made with Bouncy Castle: CAs, a server certificate for 127.0.0.1, client ones. */
final class TestCertificates {
    static final char[] PASSWORD = "changeit".toCharArray();
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    /** A key pair with its certificate, signed by {@code issuer} (itself for a CA). */
    record Issued(KeyPair keys, X509Certificate certificate, Issued issuer) {
        /** The certificate then its issuers' up to the root. */
        Certificate[] chain() {
            java.util.List<Certificate> chain = new java.util.ArrayList<>();
            for (Issued i = this; i != null; i = i.issuer == i ? null : i.issuer) {
                chain.add(i.certificate);
            }
            return chain.toArray(Certificate[]::new);
        }
    }

    private TestCertificates() {
    }

    static Issued ca(String name) throws Exception {
        KeyPair keys = keyPair();
        return new Issued(keys, sign("CN=" + name, keys, "CN=" + name, keys.getPrivate(), true, false), null);
    }

    static Issued server(Issued ca) throws Exception {
        KeyPair keys = keyPair();
        return new Issued(keys, sign("O=SkiffMQ test,CN=localhost", keys, subject(ca), ca.keys().getPrivate(), false,
            true), ca);
    }

    static Issued client(Issued ca, String commonName) throws Exception {
        return issued(ca, "O=SkiffMQ test clients,CN=" + commonName);
    }

    /**
     * A client certificate for {@code subject}, its RDNs in ASN.1 order, most significant first (so
     * {@code O=x,CN=y} reads {@code CN=y,O=x} in RFC 2253).
     */
    static Issued issued(Issued ca, String subject) throws Exception {
        KeyPair keys = keyPair();
        return new Issued(keys, sign(subject, keys, subject(ca), ca.keys().getPrivate(), false, false), ca);
    }

    private static String subject(Issued ca) {
        return ca.certificate().getSubjectX500Principal().getName();
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(String subject, KeyPair keys, String issuer, PrivateKey issuerKey, boolean ca,
            boolean server) throws Exception {
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(new X500Name(issuer),
            BigInteger.valueOf(SERIAL.incrementAndGet()), Date.from(now.minus(Duration.ofHours(1))),
            Date.from(now.plus(Duration.ofDays(1))), new X500Name(subject), keys.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(ca
            ? KeyUsage.keyCertSign | KeyUsage.cRLSign : KeyUsage.digitalSignature | KeyUsage.keyAgreement));
        if (server) {
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"),
                new GeneralName(GeneralName.iPAddress, InetAddress.getLoopbackAddress().getHostAddress())}));
        }
        return new JcaX509CertificateConverter().getCertificate(
            builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    }

    /** Writes the certificate chain (PEM) to {@code certFile} and the key (PKCS#8 PEM) to {@code keyFile}. */
    static void writePem(Issued issued, Path certFile, Path keyFile) throws Exception {
        StringBuilder chain = new StringBuilder();
        for (Certificate c : issued.chain()) {
            chain.append(pem("CERTIFICATE", c.getEncoded()));
        }
        Files.writeString(certFile, chain);
        Files.writeString(keyFile, pem("PRIVATE KEY", issued.keys().getPrivate().getEncoded()));
    }

    static void writePem(X509Certificate certificate, Path file) throws Exception {
        Files.writeString(file, pem("CERTIFICATE", certificate.getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
            + "\n-----END " + type + "-----\n";
    }

    /** A PKCS#12 key store holding {@code issued}'s key and chain, password {@link #PASSWORD}. */
    static KeyStore keyStore(Issued issued) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("key", issued.keys().getPrivate(), PASSWORD, issued.chain());
        return store;
    }

    /** A PKCS#12 trust store holding {@code ca}'s certificate. */
    static KeyStore trustStore(Issued ca) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("ca", ca.certificate());
        return store;
    }

    static Path save(KeyStore store, Path file) throws Exception {
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, PASSWORD);
        }
        return file;
    }

    /**
     * A client TLS context trusting {@code ca}, presenting {@code client} (null: no certificate) whatever CAs the
     * server says it accepts, so that an untrusted certificate is really sent.
     */
    static SSLContext clientContext(Issued ca, Issued client) throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trustStore(ca));
        KeyManagerFactory keys = null;
        if (client != null) {
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(keyStore(client), PASSWORD);
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : new javax.net.ssl.KeyManager[] {
            new AlwaysPresent((javax.net.ssl.X509ExtendedKeyManager) keys.getKeyManagers()[0])},
            trust.getTrustManagers(), null);
        return context;
    }

    /** Presents the one key it has, whichever issuers the server asks for. */
    private static final class AlwaysPresent extends javax.net.ssl.X509ExtendedKeyManager {
        private final javax.net.ssl.X509ExtendedKeyManager delegate;

        AlwaysPresent(javax.net.ssl.X509ExtendedKeyManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return "key";
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers,
                javax.net.ssl.SSLEngine engine) {
            return "key";
        }

        @Override
        public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
            return new String[] {"key"};
        }

        @Override
        public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
            return delegate.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return delegate.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return delegate.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return delegate.getPrivateKey(alias);
        }
    }
}
