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
 */
public record AuthSettings(int threads, int queue, double failureRate, int failureBurst,
        ExternalUserFrom externalUserFrom, java.util.Set<String> loopbackUsers) {

    /** Where SASL EXTERNAL's user name comes from. */
    public enum ExternalUserFrom { CN, DN }

    public AuthSettings {
        check(threads > 0, "auth-threads must be > 0");
        check(queue > 0, "auth-queue must be > 0");
        check(failureRate > 0, "login-failure-rate must be > 0");
        check(failureBurst >= 0, "login-failure-burst must be >= 0");
        check(externalUserFrom != null, "external-user-from must be cn or dn");
        loopbackUsers = java.util.Set.copyOf(loopbackUsers);
    }

    public static AuthSettings defaults() {
        int threads = Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors() / 2));
        return new AuthSettings(threads, 1024, 2, 20, ExternalUserFrom.CN, java.util.Set.of("guest"));
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
            + " (RabbitMQ's `loopback_users`), comma-separated; `none` for nobody"));

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
                externalUserFrom, loopbackUsers);
            case "auth-queue" -> new AuthSettings(threads, Integer.parseInt(value), failureRate, failureBurst,
                externalUserFrom, loopbackUsers);
            case "login-failure-rate" -> new AuthSettings(threads, queue, Double.parseDouble(value), failureBurst,
                externalUserFrom, loopbackUsers);
            case "login-failure-burst" -> new AuthSettings(threads, queue, failureRate, Integer.parseInt(value),
                externalUserFrom, loopbackUsers);
            case "external-user-from" -> new AuthSettings(threads, queue, failureRate, failureBurst, switch (value) {
                case "cn" -> ExternalUserFrom.CN;
                case "dn" -> ExternalUserFrom.DN;
                default -> throw new IllegalArgumentException("external-user-from must be cn or dn, got " + value);
            }, loopbackUsers);
            case "loopback-users" -> new AuthSettings(threads, queue, failureRate, failureBurst, externalUserFrom,
                value.equals("none") ? java.util.Set.of() : java.util.Arrays.stream(value.split(","))
                    .map(String::strip).filter(u -> !u.isEmpty()).collect(java.util.stream.Collectors.toSet()));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
