package io.skiffmq.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.logging.LogSettings;
import io.skiffmq.server.transport.TlsSettings;
import io.skiffmq.store.Journal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The settings' sources, their priorities, and the messages that stop a start; a config file with every setting. */
class ConfigLoaderTest {
    /** A value other than the default for every setting. */
    static final Map<String, String> EVERY_SETTING = new LinkedHashMap<>();

    static {
        String[] pairs = {
            "port", "5673", "bind", "127.0.0.1", "data-dir", "/var/lib/skiffmq", "sync-policy", "os",
            "journal-segment-size", "1048576", "queue-memory-limit", "1048576", "dead-letter-retry-interval", "5000",
            "allow-plain-amqp", "true",
            "anonymous-login-user", "none", "users-file", "/etc/skiffmq/users", "initial-max-frame-size", "8192",
            "max-frame-size", "65536", "channel-max", "100", "idle-timeout", "30000", "handshake-timeout", "5000",
            "max-message-size", "1048576", "session-window", "100", "publisher-credit", "10",
            "max-unconfirmed", "50", "durable-if-no-header", "false", "auto-create-queues", "false",
            "rabbitmq-version", "4.1.0", "node", "rabbit@test", "amqp091-port", "5682", "heartbeat", "30",
            "amqp091-initial-frame-max", "16384",
            "memory-high-watermark", "512MB", "disk-free-limit", "1GiB", "event-loops", "3",
            "publisher-flow", "false", "log-level", "debug", "log-format", "json", "auth-threads", "3",
            "auth-queue", "10", "login-failure-rate", "0.5", "login-failure-burst", "0", "external-user-from", "dn",
            "loopback-users", "none", "max-preauth-connections", "200", "default-user", "admin",
            "default-pass", "hunter#2", "amqps-port", "5671", "tls-cert-file", "/c.pem", "tls-key-file", "/k.pem",
            "tls-key-password", "s3cret#1", "tls-ca-file", "/ca.pem", "tls-protocols", "TLSv1.3",
            "tls-ciphers", "TLS_AES_128_GCM_SHA256", "tls-verify", "required", "tls-provider", "jdk",
            "prometheus-port", "15693", "prometheus-per-queue-metrics", "false", "management-port", "15673",
            "collect-statistics-interval", "1000", "max-super-stream-partitions", "10",
            "management-counts-timeout", "2000", "management-threads", "4", "consumer-timeout", "none",
            "channel-tick-interval", "1000",
            "max-transaction-messages", "100",
            "max-transaction-bytes", "1MiB", "stream-port", "5553", "stream-tls-port", "5551",
            "stream-advertised-host", "streams.example", "stream-advertised-port", "15552",
            "stream-advertised-tls-host", "tls.example", "stream-advertised-tls-port", "15551",
            "stream-frame-max", "65536", "stream-heartbeat", "20", "stream-initial-frame-max", "16384",
            "stream-initial-credits", "1000", "stream-credits-required-for-unblocking", "100",
            "stream-max-sub-entry-batch-size", "1048576", "definitions-compaction-ratio", "2.5",
            "definitions-compaction-min-bytes", "64KiB", "cluster-port", "25672",
            "cluster-nodes", "rabbit@test:25672,rabbit@other:25672", "cluster-secret-file", "/etc/skiffmq/secret",
            "cluster-append-timeout", "5000", "cluster-max-in-flight", "500",
            "cluster-queue-snapshot-bytes", "16MiB", "cluster-election-timeout", "400"};
        for (int i = 0; i < pairs.length; i += 2) {
            EVERY_SETTING.put(pairs[i], pairs[i + 1]);
        }
    }

    @TempDir
    Path dir;

    private static ConfigLoader.Loaded load(String[] args, Map<String, String> env, Properties props,
            List<Path> files) {
        return ConfigLoader.load(args, env, props, files);
    }

    @Test
    void aConfigFileWithEverySettingSetsEachOfThem() throws Exception {
        assertThat(EVERY_SETTING.keySet()).as("the test covers every setting")
            .containsExactlyInAnyOrderElementsOf(Settings.ALL.stream().map(Setting::name).toList());
        StringBuilder file = new StringBuilder("# every setting, RabbitMQ style\n\n");
        EVERY_SETTING.forEach((name, value) -> file.append(name).append(" = ").append(value).append('\n'));
        Path conf = Files.writeString(dir.resolve("skiffmq.conf"), file);

        BrokerConfig config = load(new String[] {"--config-file=" + conf}, Map.of(), new Properties(), List.of())
            .config();

        BrokerConfig defaults = BrokerConfig.defaults();
        for (Map.Entry<String, String> e : EVERY_SETTING.entrySet()) {
            assertThat(defaults.with(e.getKey(), e.getValue())).as("%s changes something", e.getKey())
                .isNotEqualTo(defaults);
            assertThat(config.with(e.getKey(), e.getValue())).as("%s = %s was read", e.getKey(), e.getValue())
                .isEqualTo(config);
        }
        assertThat(config.port()).isEqualTo(5673);
        assertThat(config.dataDir()).isEqualTo(Path.of("/var/lib/skiffmq"));
        assertThat(config.syncPolicy()).isEqualTo(Journal.SyncPolicy.OS);
        assertThat(config.anonymousUser()).isNull();
        assertThat(config.usersFile()).isEqualTo(Path.of("/etc/skiffmq/users"));
        assertThat(config.diskFreeLimit()).isEqualTo(1L << 30);
        assertThat(config.eventLoops()).isEqualTo(3);
        assertThat(config.log()).isEqualTo(new LogSettings("debug", LogSettings.Format.JSON));
        assertThat(config.auth()).isEqualTo(new AuthSettings(3, 10, 0.5, 0, AuthSettings.ExternalUserFrom.DN,
            Set.of(), 200, new AuthSettings.DefaultUser("admin", "hunter#2")));
        assertThat(config.tls().keyPassword()).as("a # inside a value is kept").isEqualTo("s3cret#1");
        assertThat(config.tls().verify()).isEqualTo(TlsSettings.Verify.REQUIRED);
        assertThat(config.definitionsCompaction())
            .isEqualTo(new io.skiffmq.store.definitions.ChangeLog.Compaction(2.5, 64 << 10));
    }

    @Test
    void everyLiteralDefaultIsTheDefaultTheBrokerRunsWith() {
        BrokerConfig defaults = BrokerConfig.defaults();
        for (Setting setting : Settings.ALL) {
            if (setting.literalDefault()) {
                assertThat(defaults.with(setting.name(), setting.defaultValue()))
                    .as("%s's documented default %s", setting.name(), setting.defaultValue()).isEqualTo(defaults);
            }
        }
    }

    @Test
    void laterSourcesWin() throws Exception {
        Path conf = Files.writeString(dir.resolve("a.conf"), "port = 1001\nheartbeat = 11\nchannel-max = 21\n"
            + "session-window = 31\n");
        Properties props = new Properties();
        props.setProperty("skiffmq.channel-max", "23");
        props.setProperty("skiffmq.session-window", "33");
        props.setProperty("unrelated.property", "x");
        Map<String, String> env = Map.of("SKIFFMQ_HEARTBEAT", "12", "SKIFFMQ_CHANNEL_MAX", "22",
            "SKIFFMQ_SESSION_WINDOW", "32", "PATH", "/bin");

        BrokerConfig config = load(new String[] {"--session-window=34"}, env, props, List.of(conf)).config();

        assertThat(config.port()).as("file").isEqualTo(1001);
        assertThat(config.heartbeatSeconds()).as("environment over file").isEqualTo(12);
        assertThat(config.channelMax()).as("system property over environment").isEqualTo(23);
        assertThat(config.sessionWindow()).as("flag over system property").isEqualTo(34);
    }

    @Test
    void theConfigFileIsNamedByFlagOrEnvironmentElseFoundInItsDefaultPlaces() throws Exception {
        Path first = Files.writeString(dir.resolve("first.conf"), "port = 2001\n");
        Path second = Files.writeString(dir.resolve("second.conf"), "port = 2002\n");
        Path missing = dir.resolve("missing.conf");
        assertThat(load(new String[0], Map.of(), new Properties(), List.of(missing, second)).config().port())
            .isEqualTo(2002);
        assertThat(load(new String[0], Map.of("SKIFFMQ_CONFIG_FILE", first.toString()), new Properties(),
            List.of(second)).config().port()).isEqualTo(2001);
        assertThat(load(new String[] {"--config-file", second.toString()},
            Map.of("SKIFFMQ_CONFIG_FILE", first.toString()), new Properties(), List.of()).config().port())
            .isEqualTo(2002);
        assertThat(load(new String[0], Map.of(), new Properties(), List.of(missing)).configFile()).isNull();
        assertThatThrownBy(() -> load(new String[0], Map.of("SKIFFMQ_CONFIG_FILE", missing.toString()),
            new Properties(), List.of())).isInstanceOf(ConfigException.class)
            .hasMessageContaining("missing.conf").hasMessageContaining("SKIFFMQ_CONFIG_FILE");
    }

    @Test
    void anUnknownOrInvalidSettingNamesItselfAndItsSource() throws Exception {
        Path conf = Files.writeString(dir.resolve("bad.conf"), "# comment\nport = 5673\n\nqueue-memroy-limit = 1\n");
        assertThatThrownBy(() -> load(new String[0], Map.of(), new Properties(), List.of(conf)))
            .isInstanceOf(ConfigException.class)
            .hasMessage("unknown setting queue-memroy-limit (" + conf + ":4)");
        Path badValue = Files.writeString(dir.resolve("value.conf"), "heartbeat = soon\n");
        assertThatThrownBy(() -> load(new String[0], Map.of(), new Properties(), List.of(badValue)))
            .hasMessageContaining("heartbeat").hasMessageContaining("soon").hasMessageContaining(badValue + ":1");
        Path noEquals = Files.writeString(dir.resolve("syntax.conf"), "port 5673\n");
        assertThatThrownBy(() -> load(new String[0], Map.of(), new Properties(), List.of(noEquals)))
            .hasMessageContaining(noEquals + ":1").hasMessageContaining("key = value");
        assertThatThrownBy(() -> load(new String[0], Map.of("SKIFFMQ_PORTT", "1"), new Properties(), List.of()))
            .hasMessage("unknown setting portt (environment variable SKIFFMQ_PORTT)");
        assertThatThrownBy(() -> load(new String[0], Map.of("SKIFFMQ_SYNC_POLICY", "never"), new Properties(),
            List.of())).hasMessageContaining("sync-policy").hasMessageContaining("environment variable "
                + "SKIFFMQ_SYNC_POLICY");
        Properties props = new Properties();
        props.setProperty("skiffmq.max-frame-size", "100");
        assertThatThrownBy(() -> load(new String[0], Map.of(), props, List.of()))
            .hasMessageContaining("max-frame-size must be >= 512").hasMessageContaining("system property");
        assertThatThrownBy(() -> load(new String[] {"--nonsense=1"}, Map.of(), new Properties(), List.of()))
            .hasMessage("unknown setting nonsense (command line --nonsense=1)");
        assertThatThrownBy(() -> load(new String[] {"--port=70000"}, Map.of(), new Properties(), List.of()))
            .hasMessageContaining("port must be in [0, 65535]").hasMessageContaining("command line --port");
        assertThatThrownBy(() -> load(new String[] {"--cluster-election-timeout=50"}, Map.of(), new Properties(),
            List.of())).hasMessageContaining("cluster-election-timeout must be >= 100 ms")
                .hasMessageContaining("command line --cluster-election-timeout");
    }

    @Test
    void helpListsEverySettingWithItsDefault() {
        ConfigLoader.Loaded loaded = load(new String[] {"--help"}, Map.of(), new Properties(), List.of());
        assertThat(loaded.flags().help()).isTrue();
        assertThat(loaded.config()).isNull();
        String usage = CommandLineFlags.usage();
        for (Setting setting : Settings.ALL) {
            assertThat(usage).contains("--" + setting.name() + "=<");
        }
        assertThat(usage).contains("(default: 16777216)").contains("SKIFFMQ_QUEUE_MEMORY_LIMIT")
            .contains("--config-file");
    }

    @Test
    void theReadmeTableIsTheRegistry() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        String begin = "<!-- settings table: made by io.skiffmq.server.config.Settings -->\n";
        int start = readme.indexOf(begin);
        assertThat(start).as("README has the marked settings table").isNotNegative();
        int from = start + begin.length();
        int end = readme.indexOf("\n\n", from);
        assertThat(readme.substring(from, end + 1))
            .as("README's table; regenerate with java -cp broker-server/target/classes"
                + " io.skiffmq.server.config.Settings").isEqualTo(Settings.markdownTable());
    }
}
