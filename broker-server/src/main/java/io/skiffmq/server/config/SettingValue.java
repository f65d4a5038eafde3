package io.skiffmq.server.config;

/**
 * A setting's value as one source gave it, with where it came from, for the message that stops a start.
 *
 * @param name the setting's name as written (it may name no setting)
 * @param origin {@code skiffmq.conf:12}, {@code environment variable SKIFFMQ_PORT}, {@code system property
 *        skiffmq.port} or {@code command line --port}
 */
public record SettingValue(String name, String value, String origin) {
}
