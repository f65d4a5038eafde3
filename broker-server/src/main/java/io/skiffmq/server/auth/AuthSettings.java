package io.skiffmq.server.auth;

import io.skiffmq.server.config.Setting;

/**
 * How logins are checked: the authentication threads and their queue, the failed-login rate limit per source
 * address, and where SASL EXTERNAL takes the user name from. Listed in {@link #SETTINGS} (joined into
 * {@code Settings.ALL}), parsed by {@link #with}. Immutable.
 *
 * @param threads threads that verify passwords ({@code auth-threads})
 * @param queue logins that may wait for one of them; beyond, a login is refused as busy ({@code auth-queue})
 * @param failureRate failed logins per second an address earns back ({@code login-failure-rate})
 * @param failureBurst failed logins an address may have in a row ({@code login-failure-burst}); 0 switches the
 *        limit off
 * @param externalUserFrom {@code cn} (the certificate subject's common name) or {@code dn} (the whole subject)
 * @param loopbackUsers users who may log in from loopback addresses only ({@code loopback-users}, RabbitMQ's
 *        {@code loopback_users}: guest by default)
 * @param maxPreauthConnections connections that may be open at once before their {@code open} (TCP accepted,
 *        before or in the protocol header, SASL, 0-9-1's start/tune); beyond, a new one is closed at once
 *        ({@code max-preauth-connections}, {@link #NO_PREAUTH_LIMIT} for no limit)
 * @param defaultUser the user a first start creates ({@code default-user} and {@code default-pass})
 */
public record AuthSettings(int threads, int queue, double failureRate, int failureBurst,
        ExternalUserFrom externalUserFrom, java.util.Set<String> loopbackUsers, int maxPreauthConnections,
        DefaultUser defaultUser) {

    /** {@code max-preauth-connections = none} (or 0): no limit. */
    public static final int NO_PREAUTH_LIMIT = 0;
    /**
     * {@code max-preauth-connections}' default: well above what a busy broker's legitimate clients have in their
     * handshakes at once (a handshake takes milliseconds; 1,000 concurrent ones is a reconnect storm of thousands
     * of clients), low enough that silent peers holding their handshake-timeout slots cost little memory (a
     * connection before open holds a few KiB).
     */
    public static final int DEFAULT_MAX_PREAUTH_CONNECTIONS = 1000;

    /** Where SASL EXTERNAL's user name comes from. */
    public enum ExternalUserFrom { CN, DN }

    /**
     * The user a first start creates, with the administrator tag and every permission on {@code /}: RabbitMQ's
     * {@code default_user} and {@code default_pass} (its image's {@code RABBITMQ_DEFAULT_USER} and
     * {@code RABBITMQ_DEFAULT_PASS}; ours are {@code SKIFFMQ_DEFAULT_USER} and {@code SKIFFMQ_DEFAULT_PASS}).
     * Another name replaces guest, who is then not created. A data directory that has its users keeps them.
     */
    public record DefaultUser(String name, String password) {
        public static final DefaultUser GUEST = new DefaultUser("guest", "guest");

        public DefaultUser {
            check(name != null && !name.isEmpty(), "default-user must not be empty");
            check(password != null, "default-pass must be set");
        }

        /** Without the password, which no log line or error may show. */
        @Override
        public String toString() {
            return "DefaultUser[" + name + "]";
        }
    }

    public AuthSettings {
        check(threads > 0, "auth-threads must be > 0");
        check(queue > 0, "auth-queue must be > 0");
        check(failureRate > 0, "login-failure-rate must be > 0");
        check(failureBurst >= 0, "login-failure-burst must be >= 0");
        check(externalUserFrom != null, "external-user-from must be cn or dn");
        check(maxPreauthConnections >= 0, "max-preauth-connections must be >= 0 or none");
        check(defaultUser != null, "default-user must be set");
        loopbackUsers = java.util.Set.copyOf(loopbackUsers);
    }

    public static AuthSettings defaults() {
        int threads = Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors() / 2));
        return new AuthSettings(threads, 1024, 2, 20, ExternalUserFrom.CN, java.util.Set.of("guest"),
            DEFAULT_MAX_PREAUTH_CONNECTIONS, DefaultUser.GUEST);
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.described("auth-threads", "int", "cores / 2, in [2, 8]",
            "threads that check passwords, so no event loop hashes one (docs/security.md)"),
        Setting.of("auth-queue", "int", "1024",
            "logins that may wait for those threads; beyond, a login is refused at once as busy"),
        Setting.of("login-failure-rate", "number", "2", "failed logins per second a source address earns back"),
        Setting.of("login-failure-burst", "int", "20", "failed logins a source address may have in a row before its"
            + " logins are refused unchecked; 0: no limit"),
        Setting.of("external-user-from", "cn|dn", "cn",
            "SASL EXTERNAL's user: the client certificate subject's `cn`, or the whole `dn` (RFC 2253)"),
        Setting.of("loopback-users", "users|none", "guest", "users who may log in from loopback addresses only"
            + " (RabbitMQ's `loopback_users`), comma-separated; `none` for nobody"),
        Setting.of("max-preauth-connections", "int|none", "1000", "connections open at once that have not finished"
            + " their handshake (`open`); beyond, a new one is closed at once, before anything is read (docs/security.md);"
            + " `none` or 0: no limit"),
        Setting.of("default-user", "user", "guest", "the user a first start creates, tagged administrator, with every"
            + " permission on `/` (RabbitMQ's `default_user`; `SKIFFMQ_DEFAULT_USER`); another name replaces guest;"
            + " a data directory that has users keeps them"),
        Setting.of("default-pass", "password", "guest",
            "that user's password (RabbitMQ's `default_pass`; `SKIFFMQ_DEFAULT_PASS`)"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a number that is not one
     */
    public AuthSettings with(String name, String value) {
        return switch (name) {
            case "auth-threads" -> new AuthSettings(Integer.parseInt(value), queue, failureRate, failureBurst,
                externalUserFrom, loopbackUsers, maxPreauthConnections, defaultUser);
            case "auth-queue" -> new AuthSettings(threads, Integer.parseInt(value), failureRate, failureBurst,
                externalUserFrom, loopbackUsers, maxPreauthConnections, defaultUser);
            case "login-failure-rate" -> new AuthSettings(threads, queue, Double.parseDouble(value), failureBurst,
                externalUserFrom, loopbackUsers, maxPreauthConnections, defaultUser);
            case "login-failure-burst" -> new AuthSettings(threads, queue, failureRate, Integer.parseInt(value),
                externalUserFrom, loopbackUsers, maxPreauthConnections, defaultUser);
            case "external-user-from" -> new AuthSettings(threads, queue, failureRate, failureBurst, switch (value) {
                case "cn" -> ExternalUserFrom.CN;
                case "dn" -> ExternalUserFrom.DN;
                default -> throw new IllegalArgumentException("external-user-from must be cn or dn, got " + value);
            }, loopbackUsers, maxPreauthConnections, defaultUser);
            case "loopback-users" -> new AuthSettings(threads, queue, failureRate, failureBurst, externalUserFrom,
                value.equals("none") ? java.util.Set.of() : java.util.Arrays.stream(value.split(","))
                    .map(String::strip).filter(u -> !u.isEmpty()).collect(java.util.stream.Collectors.toSet()),
                maxPreauthConnections, defaultUser);
            case "max-preauth-connections" -> new AuthSettings(threads, queue, failureRate, failureBurst,
                externalUserFrom, loopbackUsers, value.equals("none") ? NO_PREAUTH_LIMIT : Integer.parseInt(value),
                defaultUser);
            case "default-user" -> new AuthSettings(threads, queue, failureRate, failureBurst, externalUserFrom,
                loopbackUsers, maxPreauthConnections, new DefaultUser(value, defaultUser.password()));
            case "default-pass" -> new AuthSettings(threads, queue, failureRate, failureBurst, externalUserFrom,
                loopbackUsers, maxPreauthConnections, new DefaultUser(defaultUser.name(), value));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
