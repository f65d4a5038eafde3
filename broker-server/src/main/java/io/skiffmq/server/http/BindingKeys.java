package io.skiffmq.server.http;

import io.skiffmq.core.routing.Binding;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * A binding's {@code properties_key}, the last segment of its URL: the routing key when it has no arguments (as
 * RabbitMQ; {@code ~} when the key is empty), else the key, {@code ~} and a hash of the arguments. Stateless.
 */
final class BindingKeys {
    private BindingKeys() {
    }

    static String propertiesKey(Binding binding) {
        if (binding.arguments().isEmpty()) {
            return binding.key().isEmpty() ? "~" : binding.key();
        }
        return binding.key() + "~" + hash(binding.arguments());
    }

    /** SHA-256 of the sorted arguments' text, base64url, cut to 22 characters (RabbitMQ's hash is opaque too). */
    private static String hash(Map<String, Object> arguments) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                .digest(new TreeMap<>(arguments).toString().getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 22);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
