package io.skiffmq.server.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * The TLS of the AMQPS and stream TLS listeners: one {@link SslContext} built from {@link TlsSettings} at start, with OpenSSL
 * (BoringSSL, from {@code netty-tcnative-boringssl-static}) when it loads and the JDK's provider otherwise (or as
 * {@code tls-provider} says), and a
 * fresh {@link SslHandler} per connection. Immutable after construction; {@link #newHandler} is called on the
 * accepting connection's event loop.
 */
final class TlsContext {
    private static final System.Logger LOG = System.getLogger(TlsContext.class.getName());

    private final SslContext context;
    private final SslProvider provider;

    private TlsContext(SslContext context, SslProvider provider) {
        this.context = context;
        this.provider = provider;
    }

    /**
     * Checks the settings as a whole and loads the files.
     *
     * @param port the TLS port setting that needs them, named in the failures
     * @throws IOException when a file is missing or unreadable, or the settings do not fit together
     */
    static TlsContext of(TlsSettings settings, String port) throws IOException {
        requireFile(port, "tls-cert-file", settings.certFile());
        requireFile(port, "tls-key-file", settings.keyFile());
        if (settings.verify() != TlsSettings.Verify.NONE) {
            requireFile(port, "tls-ca-file (needed with tls-verify=" + settings.verify().name().toLowerCase() + ")",
                settings.caFile());
        }
        if (settings.provider() == TlsSettings.Provider.OPENSSL && !OpenSsl.isAvailable()) {
            throw new IOException("tls-provider=openssl, but OpenSSL does not load: " + OpenSsl.unavailabilityCause());
        }
        SslProvider provider = settings.provider() == TlsSettings.Provider.JDK || !OpenSsl.isAvailable()
            ? SslProvider.JDK : SslProvider.OPENSSL;
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(settings.certFile().toFile(),
                    settings.keyFile().toFile(), settings.keyPassword())
                .sslProvider(provider)
                .protocols(settings.protocols())
                .clientAuth(switch (settings.verify()) {
                    case NONE -> ClientAuth.NONE;
                    case OPTIONAL -> ClientAuth.OPTIONAL;
                    case REQUIRED -> ClientAuth.REQUIRE;
                });
            if (settings.caFile() != null) {
                builder.trustManager(settings.caFile().toFile());
            }
            if (!settings.ciphers().isEmpty()) {
                builder.ciphers(settings.ciphers());
            }
            TlsContext tls = new TlsContext(builder.build(), provider);
            LOG.log(System.Logger.Level.INFO, "TLS through {0} ({1}), protocols {2}, peer verification {3}",
                provider == SslProvider.OPENSSL ? "OpenSSL (" + OpenSsl.versionString() + ")" : "the JDK",
                provider, settings.protocols(), settings.verify().name().toLowerCase());
            return tls;
        } catch (SSLException | IllegalArgumentException e) {
            throw new IOException("TLS settings: " + e.getMessage(), e);
        }
    }

    /** @param port the TLS port setting that asks for the file ({@code amqps-port}, {@code stream-tls-port}) */
    private static void requireFile(String port, String setting, Path file) throws IOException {
        if (file == null) {
            throw new IOException(port + " is set but " + setting + " is not");
        }
        if (!Files.isReadable(file)) {
            throw new IOException(setting + ": cannot read " + file);
        }
    }

    SslHandler newHandler(ByteBufAllocator alloc) {
        return context.newHandler(alloc);
    }

    SslProvider provider() {
        return provider;
    }
}
