package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The web console's static files over HTTP, without a browser: content types, revalidation by ETag, HEAD, the
 * answers to unknown paths, other methods and paths that try to climb out of the console's directory, and that
 * {@code /api} is still the API.
 */
@ExtendWith(LeakDetection.class)
class ConsoleFilesTest {
    private static RunningBroker broker;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static HttpResponse<String> request(String method, String path, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + broker.managementPort() + path))
            .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody());
        headers.forEach(request::header);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A request written as is (no client normalises the path); the status line and the rest of the answer. */
    private static String raw(String requestLine) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", broker.managementPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write((requestLine + "\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            in.transferTo(answer);
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void theRootIsTheConsolesPage() throws Exception {
        HttpResponse<String> page = request("GET", "/", Map.of());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-cache");
        assertThat(page.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow()).contains("default-src 'self'");
        assertThat(page.body()).contains("<script type=\"module\" src=\"console.js\"></script>");
        assertThat(request("GET", "/index.html", Map.of()).body()).isEqualTo(page.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/console.js", "/api.js", "/charts.js", "/dom.js", "/pages.js", "/queue.js"})
    void scriptsAreJavaScript(String path) throws Exception {
        HttpResponse<String> script = request("GET", path, Map.of());
        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
        assertThat(script.body()).isNotEmpty();
    }

    @Test
    void theStyleSheetIsCssAndTheQueryIsIgnored() throws Exception {
        HttpResponse<String> css = request("GET", "/console.css?v=2", Map.of());
        assertThat(css.statusCode()).isEqualTo(200);
        assertThat(css.headers().firstValue("Content-Type")).hasValue("text/css; charset=utf-8");
    }

    @Test
    void anUnchangedFileIsNotSentAgain() throws Exception {
        String etag = request("GET", "/console.js", Map.of()).headers().firstValue("ETag").orElseThrow();
        assertThat(etag).matches("\"[0-9a-f]{32}\"");
        HttpResponse<String> again = request("GET", "/console.js", Map.of("If-None-Match", etag));
        assertThat(again.statusCode()).isEqualTo(304);
        assertThat(again.body()).isEmpty();
        assertThat(again.headers().firstValue("ETag")).hasValue(etag);
        assertThat(request("GET", "/console.js", Map.of("If-None-Match", "\"other\"")).statusCode()).isEqualTo(200);
        // another file's tag does not match
        assertThat(request("GET", "/console.css", Map.of("If-None-Match", etag)).statusCode()).isEqualTo(200);
    }

    @Test
    void headAnswersTheHeadersOnly() throws Exception {
        int length = request("GET", "/console.css", Map.of()).body().getBytes(StandardCharsets.UTF_8).length;
        HttpResponse<String> head = request("HEAD", "/console.css", Map.of());
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.headers().firstValue("Content-Length")).hasValue(String.valueOf(length));
        assertThat(head.body()).isEmpty();
    }

    @Test
    void otherMethodsAreNotAllowed() throws Exception {
        for (String method : new String[] {"POST", "PUT", "DELETE"}) {
            HttpResponse<String> refused = request(method, "/", Map.of());
            assertThat(refused.statusCode()).as(method).isEqualTo(405);
            assertThat(refused.headers().firstValue("Allow")).hasValue("GET, HEAD");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/nothing.js", "/index.htm", "/console.js/", "/io/skiffmq/server/console/index.html",
        "/favicon.ico", "/./index.html", "/%69ndex.html"})
    void unknownFilesAreNotFound(String path) throws Exception {
        assertThat(raw("GET " + path + " HTTP/1.1")).startsWith("HTTP/1.1 404 ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/../pom.xml", "/../../../../etc/passwd", "/%2e%2e/pom.xml", "/..%2fpom.xml",
        "/console.js/../../pom.xml", "/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/....//etc/passwd",
        "/../io/skiffmq/server/http/HttpApi.class"})
    void pathsOutOfTheConsoleAreNotFound(String path) throws Exception {
        String answer = raw("GET " + path + " HTTP/1.1");
        assertThat(answer).startsWith("HTTP/1.1 404 ");
        assertThat(answer).doesNotContain("root:").doesNotContain("<project");
    }

    @Test
    void theApiIsStillTheApi() throws Exception {
        HttpResponse<String> api = request("GET", "/api/whoami", Map.of());
        assertThat(api.statusCode()).isEqualTo(401);
        assertThat(api.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(api.headers().firstValue("WWW-Authenticate")).hasValue("Basic realm=\"RabbitMQ Management\"");
        assertThat(request("GET", "/api", Map.of()).statusCode()).isEqualTo(401);
    }

    @Test
    void aScriptsRequestIsNotChallengedSoTheBrowserOpensNoLoginDialog() throws Exception {
        HttpResponse<String> api = request("GET", "/api/whoami", Map.of("X-Requested-With", "XMLHttpRequest",
            "Authorization", "Basic Z3Vlc3Q6d3Jvbmc="));
        assertThat(api.statusCode()).isEqualTo(401);
        assertThat(api.body()).isEqualTo("{\"error\":\"not_authorized\",\"reason\":\"Not_Authorized\"}");
        assertThat(api.headers().firstValue("WWW-Authenticate")).isEmpty();
    }
}
