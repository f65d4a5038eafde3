package io.skiffmq.server;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * A health check for containers and scripts, with nothing but the JDK (the image needs no curl): asks one of the
 * HTTP API's health checks and exits 0 when it answers 200 ({@code {"status":"ok"}}), 1 otherwise, saying why on
 * stderr. Arguments, all optional: the check's URL, default the local node's {@code is-in-service} check, which
 * needs no user (as in RabbitMQ), so the probe keeps working once guest is deleted; then a user and password for a
 * check that needs them ({@code virtual-hosts}, {@code alarms}).
 */
public final class HealthProbe {
    static final String DEFAULT_URL = "http://127.0.0.1:15672/api/health/checks/is-in-service";
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private HealthProbe() {
    }

    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : DEFAULT_URL;
        String user = args.length > 1 ? args[1] : null;
        String password = args.length > 2 ? args[2] : "";
        String failure = check(URI.create(url), user, password);
        if (failure != null) {
            System.err.println("skiffmq health check failed: " + failure);
            System.exit(1);
        }
    }

    /** Null when the check at {@code uri} answers 200, otherwise what went wrong; {@code user} null: no login. */
    static String check(URI uri, String user, String password) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET();
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        try {
            HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(TIMEOUT).build()
                .send(request.build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? null : response.statusCode() + " " + response.body();
        } catch (IOException e) {
            return uri + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
