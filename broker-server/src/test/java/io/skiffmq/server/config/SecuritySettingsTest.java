package io.skiffmq.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.transport.AmqpListener;
import io.skiffmq.server.transport.TlsSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The authentication and TLS settings as {@link BrokerConfig} parses them, and the checks made at start. */
class SecuritySettingsTest {
    @TempDir
    Path dir;

    @Test
    void settingsParse() {
        BrokerConfig config = BrokerConfig.from(new String[] {"--auth-threads=3", "--auth-queue=10",
            "--login-failure-rate=0.5", "--login-failure-burst=0", "--external-user-from=dn", "--amqps-port=5671",
            "--tls-cert-file=/c.pem", "--tls-key-file=/k.pem", "--tls-ca-file=/ca.pem", "--tls-verify=optional",
            "--tls-protocols=TLSv1.3", "--tls-ciphers=TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384",
            "--tls-provider=jdk", "--loopback-users=guest, ops"}, Map.of());
        assertThat(config.auth()).isEqualTo(new AuthSettings(3, 10, 0.5, 0, AuthSettings.ExternalUserFrom.DN,
            java.util.Set.of("guest", "ops"), AuthSettings.DEFAULT_MAX_PREAUTH_CONNECTIONS,
            AuthSettings.DefaultUser.GUEST));
        assertThat(config.with("max-preauth-connections", "none").auth().maxPreauthConnections())
            .isEqualTo(AuthSettings.NO_PREAUTH_LIMIT);
        assertThat(config.with("loopback-users", "none").auth().loopbackUsers()).isEmpty();
        TlsSettings tls = config.tls();
        assertThat(tls.enabled()).isTrue();
        assertThat(tls.port()).isEqualTo(TlsSettings.DEFAULT_AMQPS_PORT);
        assertThat(tls.certFile()).isEqualTo(Path.of("/c.pem"));
        assertThat(tls.caFile()).isEqualTo(Path.of("/ca.pem"));
        assertThat(tls.verify()).isEqualTo(TlsSettings.Verify.OPTIONAL);
        assertThat(tls.protocols()).containsExactly("TLSv1.3");
        assertThat(tls.ciphers()).containsExactly("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384");
        assertThat(tls.provider()).isEqualTo(TlsSettings.Provider.JDK);
    }

    @Test
    void defaultsAreOffAndSane() {
        BrokerConfig config = BrokerConfig.defaults();
        assertThat(config.tls().enabled()).isFalse();
        assertThat(config.tls().verify()).isEqualTo(TlsSettings.Verify.NONE);
        assertThat(config.tls().protocols()).isEqualTo(List.of("TLSv1.3", "TLSv1.2"));
        assertThat(config.auth().threads()).isBetween(2, 8);
        assertThat(config.auth().failureBurst()).isPositive();
        assertThat(config.auth().externalUserFrom()).isEqualTo(AuthSettings.ExternalUserFrom.CN);
        assertThat(config.auth().loopbackUsers()).containsExactly("guest");
    }

    @Test
    void badValuesAreRefusedByName() {
        BrokerConfig config = BrokerConfig.defaults();
        assertThatThrownBy(() -> config.with("tls-verify", "maybe")).hasMessageContaining("tls-verify must be");
        assertThatThrownBy(() -> config.with("external-user-from", "email"))
            .hasMessageContaining("external-user-from must be cn or dn");
        assertThatThrownBy(() -> config.with("auth-threads", "0")).hasMessage("auth-threads must be > 0");
        assertThatThrownBy(() -> config.with("auth-queue", "x")).hasMessage("auth-queue must be a number, got x");
        assertThatThrownBy(() -> config.with("amqps-port", "70000")).hasMessageContaining("amqps-port must be");
        assertThatThrownBy(() -> config.with("tls-provider", "bouncy")).hasMessageContaining("tls-provider must be");
    }

    @Test
    void anAmqpsPortWithoutItsFilesStopsTheStart() {
        BrokerConfig config = BrokerConfig.defaults().with("data-dir", dir.toString()).with("port", "0")
            .with("amqps-port", "0");
        assertThatThrownBy(() -> new AmqpListener(config)).isInstanceOf(java.io.IOException.class)
            .hasMessage("amqps-port is set but tls-cert-file is not");
        BrokerConfig noCa = config.with("tls-cert-file", dir.resolve("missing.pem").toString());
        assertThatThrownBy(() -> new AmqpListener(noCa)).hasMessageContaining("tls-cert-file: cannot read");
    }
}
