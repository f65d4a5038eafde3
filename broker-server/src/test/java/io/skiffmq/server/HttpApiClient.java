package io.skiffmq.server;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/** The JDK's HTTP client on a broker's HTTP API, as one user (basic authentication), for the HTTP API tests. */
final class HttpApiClient {
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String host;
    private final int port;
    private final String authorization;

    /** An answer: status, body parsed as JSON (null when empty), headers. */
    record Answer(int status, Object body, HttpResponse<String> raw) {
        @SuppressWarnings("unchecked")
        Map<String, Object> map() {
            return (Map<String, Object>) body;
        }

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> list() {
            return (List<Map<String, Object>>) body;
        }
    }

    HttpApiClient(int port, String user, String password) {
        this("127.0.0.1", port, user, password);
    }

    /** On a broker at {@code host} (an IPv4 address or a name). */
    HttpApiClient(String host, int port, String user, String password) {
        this.host = host;
        this.port = port;
        this.authorization = user == null ? null : "Basic " + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    static HttpApiClient guest(RunningBroker broker) {
        return new HttpApiClient(broker.managementPort(), "guest", "guest");
    }

    /** A path segment percent-encoded ({@code /} is {@code %2F}). */
    static String seg(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    Answer get(String path) throws IOException, InterruptedException {
        return send("GET", path, null, Map.of());
    }

    Answer put(String path, Object body) throws IOException, InterruptedException {
        return send("PUT", path, body, Map.of());
    }

    Answer post(String path, Object body) throws IOException, InterruptedException {
        return send("POST", path, body, Map.of());
    }

    Answer delete(String path) throws IOException, InterruptedException {
        return send("DELETE", path, null, Map.of());
    }

    Answer send(String method, String path, Object body, Map<String, String> headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
            .timeout(Duration.ofSeconds(15))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body instanceof String s
                    ? s.getBytes(StandardCharsets.UTF_8) : JSON.writeValueAsBytes(body)));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        headers.forEach(request::header);
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        Object parsed = response.body().isEmpty() ? null : JSON.readValue(response.body(), Object.class);
        return new Answer(response.statusCode(), parsed, response);
    }
}
