package io.skiffmq.server.auth;

/**
 * How logins are checked: the authentication threads and their queue, the failed-login rate limit per source
 * address, and where SASL EXTERNAL takes the user name from. Parsed by {@code BrokerConfig} (its table lists them).
 * Immutable.
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

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return switch (name) {
            case "auth-threads", "auth-queue", "login-failure-rate", "login-failure-burst", "external-user-from",
                "loopback-users" -> true;
            default -> false;
        };
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
