package io.skiffmq.server.transport;

import io.skiffmq.server.config.Setting;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The AMQPS listener's settings: its port (none by default; RabbitMQ's is 5671), the PEM certificate chain and
 * private key, the PEM CA bundle client certificates are checked against, the protocols and ciphers, and whether a
 * client certificate is asked for. Listed in {@link #SETTINGS}, parsed by {@link #with}; checked as a whole when
 * the listener starts ({@link TlsContext}). Immutable.
 *
 * @param port {@code amqps-port}; {@link #NO_PORT} when there is no AMQPS listener, 0 picks a free one
 * @param certFile {@code tls-cert-file}: the server's certificate chain, PEM, its own first
 * @param keyFile {@code tls-key-file}: its private key, PEM (PKCS#8, or PKCS#1 with OpenSSL)
 * @param keyPassword {@code tls-key-password}: the key's password when it is encrypted, or null
 * @param caFile {@code tls-ca-file}: the CAs client certificates must chain to, PEM; null trusts none
 * @param protocols {@code tls-protocols}, comma-separated
 * @param ciphers {@code tls-ciphers}, comma-separated; empty: the provider's defaults
 * @param verify {@code tls-verify}: {@code none}, {@code optional} or {@code required}
 * @param provider {@code tls-provider}: {@code auto} (OpenSSL when it loads, else the JDK), {@code openssl},
 *        {@code jdk}
 */
public record TlsSettings(int port, Path certFile, Path keyFile, String keyPassword, Path caFile,
        List<String> protocols, List<String> ciphers, Verify verify, Provider provider) {
    public static final int NO_PORT = Setting.NO_PORT;
    /** RabbitMQ's AMQPS port, the one to set when enabling it. */
    public static final int DEFAULT_AMQPS_PORT = 5671;

    /** Peer verification, RabbitMQ's {@code verify} and {@code fail_if_no_peer_cert} in one. */
    public enum Verify {
        /** No client certificate is asked for (RabbitMQ's {@code verify_none}). */
        NONE,
        /** One is asked for and checked when given; a client without one is let in (PLAIN etc.). */
        OPTIONAL,
        /** One must be given and check out, or the handshake fails. */
        REQUIRED
    }

    /** Which TLS implementation: {@code AUTO} picks OpenSSL when {@code OpenSsl.isAvailable()}. */
    public enum Provider { AUTO, OPENSSL, JDK }

    public TlsSettings {
        Setting.checkPort("amqps-port", port);
        protocols = List.copyOf(protocols);
        ciphers = List.copyOf(ciphers);
        if (provider == null) {
            throw new IllegalArgumentException("tls-provider must be auto, openssl or jdk");
        }
        if (protocols.isEmpty()) {
            throw new IllegalArgumentException("tls-protocols must name at least one protocol");
        }
    }

    public static TlsSettings defaults() {
        return new TlsSettings(NO_PORT, null, null, null, null, List.of("TLSv1.3", "TLSv1.2"), List.of(),
            Verify.NONE, Provider.AUTO);
    }

    public boolean enabled() {
        return port != NO_PORT;
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final List<Setting> SETTINGS = List.of(
        Setting.of("amqps-port", "int|none", "none", "a TLS port for both protocols (RabbitMQ's is 5671); 0 picks a"
            + " free one"),
        Setting.of("tls-cert-file", "path|none", "none",
            "the server's certificate chain, PEM, its own first (needed with `amqps-port`)"),
        Setting.of("tls-key-file", "path|none", "none", "its private key, PEM (needed with `amqps-port`)"),
        Setting.described("tls-key-password", "text", "none", "the key's password when it is encrypted"),
        Setting.of("tls-ca-file", "path|none", "none", "the PEM CA bundle client certificates are checked against"),
        Setting.of("tls-protocols", "list", "TLSv1.3,TLSv1.2", "protocols offered, comma-separated"),
        Setting.described("tls-ciphers", "list", "the provider's", "cipher suites offered, comma-separated"),
        Setting.of("tls-verify", "none|optional|required", "none", "client certificates: `none` (not asked for),"
            + " `optional` (checked when given) or `required` (the handshake fails without a trusted one)"),
        Setting.of("tls-provider", "auto|openssl|jdk", "auto",
            "`auto` (OpenSSL when it loads, else the JDK's), `openssl` or `jdk`"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a port that is not a number
     */
    public TlsSettings with(String name, String value) {
        return switch (name) {
            case "amqps-port" -> new TlsSettings(Setting.port(name, value), certFile,
                keyFile, keyPassword, caFile, protocols, ciphers, verify, provider);
            case "tls-cert-file" -> new TlsSettings(port, path(value), keyFile, keyPassword, caFile, protocols, ciphers,
                verify, provider);
            case "tls-key-file" -> new TlsSettings(port, certFile, path(value), keyPassword, caFile, protocols, ciphers,
                verify, provider);
            case "tls-key-password" -> new TlsSettings(port, certFile, keyFile, value.isEmpty() ? null : value, caFile,
                protocols, ciphers, verify, provider);
            case "tls-ca-file" -> new TlsSettings(port, certFile, keyFile, keyPassword, path(value), protocols, ciphers,
                verify, provider);
            case "tls-protocols" -> new TlsSettings(port, certFile, keyFile, keyPassword, caFile, list(value), ciphers,
                verify, provider);
            case "tls-ciphers" -> new TlsSettings(port, certFile, keyFile, keyPassword, caFile, protocols, list(value),
                verify, provider);
            case "tls-verify" -> new TlsSettings(port, certFile, keyFile, keyPassword, caFile, protocols, ciphers,
                switch (value) {
                    case "none" -> Verify.NONE;
                    case "optional" -> Verify.OPTIONAL;
                    case "required" -> Verify.REQUIRED;
                    default -> throw new IllegalArgumentException("tls-verify must be none, optional or required, got "
                        + value);
                }, provider);
            case "tls-provider" -> new TlsSettings(port, certFile, keyFile, keyPassword, caFile, protocols, ciphers,
                verify, switch (value) {
                    case "auto" -> Provider.AUTO;
                    case "openssl" -> Provider.OPENSSL;
                    case "jdk" -> Provider.JDK;
                    default -> throw new IllegalArgumentException("tls-provider must be auto, openssl or jdk, got "
                        + value);
                });
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }

    private static Path path(String value) {
        return value.isEmpty() || value.equals("none") ? null : Path.of(value);
    }

    private static List<String> list(String value) {
        return Arrays.stream(value.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }
}
