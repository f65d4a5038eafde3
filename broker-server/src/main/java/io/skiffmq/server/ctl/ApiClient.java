package io.skiffmq.server.ctl;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The broker's HTTP API as {@code skiffmqctl} uses it: the JDK's HTTP client, basic authentication, JSON by
 * Jackson. A node that cannot be reached is a {@link CtlException} with {@link ExitCodes#UNAVAILABLE}; an error
 * status is one with {@link ExitCodes#SOFTWARE} naming the status and the API's {@code reason}. Used by one
 * thread (the command's).
 */
final class ApiClient {
    static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** An answer: its status and its body as parsed JSON (null when empty). */
    record Answer(int status, Object body) {
        /** The API's {@code reason} (its error bodies and failed health checks carry one), else the body. */
        String reason() {
            if (body instanceof Map<?, ?> map && map.get("reason") != null) {
                return String.valueOf(map.get("reason"));
            }
            return body == null ? "" : String.valueOf(body);
        }
    }

    private final HttpClient http;
    private final URI base;
    private final String authorization;

    ApiClient(String host, int port, String user, String password) {
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        this.base = URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port);
        this.authorization = "Basic " + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** Where the API is, for messages. */
    URI base() {
        return base;
    }

    /** A path segment percent-encoded, as the API's paths want a virtual host or a name ({@code /} is {@code %2F}). */
    static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** GET, failing on any status but 200. */
    Object get(String path) {
        return ok("GET", path, send("GET", path, null, Map.of()));
    }

    /** GET, expecting a JSON array. */
    List<Map<String, Object>> list(String path) {
        return array(path, get(path));
    }

    /** GET, expecting a JSON array; a 404 is {@code whenMissing}. */
    List<Map<String, Object>> list(String path, CtlException whenMissing) {
        return array(path, callOr404("GET", path, null, whenMissing));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> array(String path, Object body) {
        if (!(body instanceof List<?>)) {
            throw new CtlException(ExitCodes.SOFTWARE, "GET " + path + ": expected a JSON array, got " + body);
        }
        return (List<Map<String, Object>>) body;
    }

    /** A request that must succeed (2xx); returns the body. */
    Object call(String method, String path, Object body, Map<String, String> headers) {
        return ok(method, path, send(method, path, body, headers));
    }

    /**
     * A request that must succeed (2xx) or find nothing (404): then {@code whenMissing} is thrown, the command's own
     * error as rabbitmqctl words it, or with none, null is returned (nothing to do, e.g. nothing to clear).
     */
    Object callOr404(String method, String path, Object body, CtlException whenMissing) {
        Answer answer = send(method, path, body, Map.of());
        if (answer.status() == 404) {
            if (whenMissing != null) {
                throw whenMissing;
            }
            return null;
        }
        return ok(method, path, answer);
    }

    /**
     * Sends a request and returns its answer whatever the status.
     *
     * @param body null for none, else sent as JSON
     * @throws CtlException with {@link ExitCodes#UNAVAILABLE} when the node cannot be reached
     */
    Answer send(String method, String path, Object body, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT)
            .header("Authorization", authorization)
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        headers.forEach(request::header);
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw unavailable(e);
        } catch (HttpTimeoutException e) {
            throw new CtlException(ExitCodes.UNAVAILABLE, "the HTTP API at " + base + " did not answer " + method + " "
                + path + " within " + TIMEOUT.toSeconds() + " s");
        } catch (IOException e) {
            throw unavailable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CtlException(ExitCodes.SOFTWARE, "interrupted");
        }
        String text = response.body();
        Object parsed;
        try {
            parsed = text == null || text.isBlank() ? null : JSON.readValue(text, Object.class);
        } catch (JacksonException e) {
            parsed = text;
        }
        return new Answer(response.statusCode(), parsed);
    }

    private CtlException unavailable(IOException e) {
        // the JDK's ConnectException for a refused connection has no message
        String cause = e.getMessage() != null ? e.getMessage()
            : e instanceof ConnectException ? "connection refused" : e.getClass().getSimpleName();
        return new CtlException(ExitCodes.UNAVAILABLE, "unable to connect to the HTTP API at " + base + ": " + cause
            + " (is the node running, with management-port " + base.getPort() + "?)");
    }

    /** The answer's body when its status is 2xx; the API's refusal ({@link ExitCodes#SOFTWARE}) otherwise. */
    static Object ok(String method, String path, Answer answer) {
        if (answer.status() / 100 != 2) {
            throw new CtlException(ExitCodes.SOFTWARE, method + " " + path + " failed: HTTP " + answer.status()
                + (answer.reason().isEmpty() ? "" : ": " + answer.reason()));
        }
        return answer.body();
    }
}
