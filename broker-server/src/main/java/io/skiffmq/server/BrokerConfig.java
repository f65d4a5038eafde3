package io.skiffmq.server;

import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import java.nio.file.Path;
import java.util.Map;

/**
 * Broker settings. Every field has the embedded default a fresh {@code bin/skiffmq} runs with; each can be set
 * on the command line as {@code --name=value} (names below) or as a system property {@code skiffmq.name}.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>port</td><td>5672</td><td>TCP port; 0 picks a free one (tests)</td></tr>
 *   <tr><td>bind</td><td>0.0.0.0</td><td>address to listen on</td></tr>
 *   <tr><td>data-dir</td><td>./data</td><td>where durable state lives</td></tr>
 *   <tr><td>allow-plain-amqp</td><td>false</td><td>accept {@code AMQP 0 1.0.0} without SASL first</td></tr>
 *   <tr><td>initial-max-frame-size</td><td>4096</td><td>frame limit before {@code open}</td></tr>
 * </table>
 *
 * Users: {@code guest}/{@code guest} is accepted from loopback connections only, as in RabbitMQ.
 */
public record BrokerConfig(int port, String bindAddress, Path dataDir, boolean allowPlainAmqp,
        int initialMaxFrameSize) {

    public static final int DEFAULT_PORT = 5672;

    public BrokerConfig {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is not in [0, 65535]");
        }
        if (initialMaxFrameSize < Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE) {
            throw new IllegalArgumentException("initial-max-frame-size must be at least "
                + Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE);
        }
    }

    public static BrokerConfig defaults() {
        return new BrokerConfig(DEFAULT_PORT, "0.0.0.0", Path.of("data"), false,
            Amqp10FrameDecoder.DEFAULT_INITIAL_MAX_FRAME_SIZE);
    }

    /** Defaults, overridden by system properties {@code skiffmq.*}, then by {@code --name=value} arguments. */
    public static BrokerConfig from(String[] args, Map<Object, Object> systemProperties) {
        java.util.Map<String, String> values = new java.util.LinkedHashMap<>();
        systemProperties.forEach((k, v) -> {
            if (k.toString().startsWith("skiffmq.")) {
                values.put(k.toString().substring("skiffmq.".length()), v.toString());
            }
        });
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("expected --name=value, got " + arg);
            }
            values.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        BrokerConfig d = defaults();
        int port = d.port;
        String bind = d.bindAddress;
        Path dataDir = d.dataDir;
        boolean plain = d.allowPlainAmqp;
        int frame = d.initialMaxFrameSize;
        for (Map.Entry<String, String> e : values.entrySet()) {
            String v = e.getValue();
            switch (e.getKey()) {
                case "port" -> port = Integer.parseInt(v);
                case "bind" -> bind = v;
                case "data-dir" -> dataDir = Path.of(v);
                case "allow-plain-amqp" -> plain = parseBoolean(e.getKey(), v);
                case "initial-max-frame-size" -> frame = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown setting " + e.getKey());
            }
        }
        return new BrokerConfig(port, bind, dataDir, plain, frame);
    }

    private static boolean parseBoolean(String name, String value) {
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(name + " must be true or false, got " + value);
        }
        return Boolean.parseBoolean(value);
    }

    public BrokerConfig withPort(int newPort) {
        return new BrokerConfig(newPort, bindAddress, dataDir, allowPlainAmqp, initialMaxFrameSize);
    }

    public BrokerConfig withDataDir(Path newDataDir) {
        return new BrokerConfig(port, bindAddress, newDataDir, allowPlainAmqp, initialMaxFrameSize);
    }

    public BrokerConfig withAllowPlainAmqp(boolean allow) {
        return new BrokerConfig(port, bindAddress, dataDir, allow, initialMaxFrameSize);
    }
}
