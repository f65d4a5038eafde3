package io.skiffmq.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * A headless Chromium driven over the Chrome DevTools Protocol, for the web console's tests: one browser process
 * with a temporary profile, one page (a target attached in flattened mode, so every command goes over the one
 * browser WebSocket with the page's session id). Commands wait for their answer; what the page logs and throws is
 * kept for failure messages. {@link #close} ends the browser and its child processes and deletes the profile.
 * Used by one test thread; the WebSocket's listener runs on the JDK client's threads and only completes futures.
 */
final class HeadlessChromium implements AutoCloseable {
    /** The binaries looked for on the PATH, Debian's first. */
    static final List<String> BINARIES = List.of("chromium", "chromium-browser", "google-chrome",
        "google-chrome-stable");
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    /** What the page logged and threw, for failure messages. */
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final String session;
    /** Ends the browser if the test JVM is stopped before {@link #close} runs. */
    private final Thread shutdownHook;

    private HeadlessChromium(Process process, Path profile, WebSocket socket, Listener listener)
            throws IOException {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
        this.shutdownHook = new Thread(() -> {
            kill(process);
            try {
                RunningBroker.delete(profile);
            } catch (IOException e) {
                System.err.println("could not delete Chromium's profile " + profile + ": " + e);
            }
        }, "chromium-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        listener.owner = this;
        String target = command(null, "Target.createTarget", Map.of("url", "about:blank")).get("targetId")
            .asString();
        this.session = command(null, "Target.attachToTarget", Map.of("targetId", target, "flatten", true))
            .get("sessionId").asString();
        send("Page.enable", Map.of());
        send("Runtime.enable", Map.of());
        send("Emulation.setDeviceMetricsOverride", Map.of("width", 1280, "height", 900, "deviceScaleFactor", 1,
            "mobile", false));
    }

    /** The first Chromium binary on the PATH, if any. */
    static Optional<Path> find() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String name : BINARIES) {
            for (String directory : path.split(java.io.File.pathSeparator)) {
                Path candidate = Path.of(directory, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    /** Starts the browser and opens its page; on failure nothing is left running. */
    static HeadlessChromium launch(Path binary) throws IOException {
        Path profile = Files.createTempDirectory("skiffmq-chromium");
        Process process;
        try {
            process = new ProcessBuilder(binary.toString(), "--headless=new", "--no-sandbox",
                "--remote-debugging-port=0", "--user-data-dir=" + profile, "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--mute-audio", "--hide-scrollbars", "--window-size=1280,900", "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        } catch (IOException e) {
            RunningBroker.delete(profile);
            throw e;
        }
        try {
            List<String> stderr = Collections.synchronizedList(new ArrayList<>());
            CompletableFuture<String> endpoint = new CompletableFuture<>();
            Thread reader = new Thread(() -> readStderr(process, stderr, endpoint), "chromium-stderr");
            reader.setDaemon(true);
            reader.start();
            String url;
            try {
                url = endpoint.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new IOException("Chromium did not say where DevTools listen; its stderr: " + stderr, e);
            }
            Listener listener = new Listener();
            WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder()
                .connectTimeout(COMMAND_TIMEOUT).buildAsync(URI.create(url), listener)
                .get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return new HeadlessChromium(process, profile, socket, listener);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill(process);
            RunningBroker.delete(profile);
            throw new IOException("interrupted while starting Chromium", e);
        } catch (IOException | RuntimeException | ExecutionException | TimeoutException e) {
            kill(process);
            RunningBroker.delete(profile);
            throw e instanceof IOException io ? io : new IOException("starting Chromium failed", e);
        }
    }

    private static void readStderr(Process process, List<String> stderr, CompletableFuture<String> endpoint) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    endpoint.complete(m.group(1));
                } else if (stderr.size() < 200) {
                    stderr.add(line);
                }
            }
        } catch (IOException e) {
            endpoint.completeExceptionally(e);
        }
        endpoint.completeExceptionally(new IOException("Chromium closed its stderr"));
    }

    /** A command to the page; its result. */
    JsonNode send(String method, Map<String, Object> params) {
        return command(session, method, params);
    }

    private JsonNode command(String sessionId, String method, Map<String, Object> params) {
        int id = ids.incrementAndGet();
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("id", id);
        message.put("method", method);
        message.put("params", params);
        if (sessionId != null) {
            message.put("sessionId", sessionId);
        }
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            socket.sendText(JSON.writeValueAsString(message), true).get(COMMAND_TIMEOUT.toSeconds(),
                TimeUnit.SECONDS);
            JsonNode response = answer.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (response.has("error")) {
                throw new IllegalStateException(method + " failed: " + response.get("error"));
            }
            return response.get("result");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(method + " interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(method + " got no answer; the page's log: " + log(), e);
        } finally {
            pending.remove(id);
        }
    }

    /** Loads a URL and waits until the document is complete. */
    void navigate(String url) {
        send("Page.navigate", Map.of("url", url));
        org.awaitility.Awaitility.await().atMost(COMMAND_TIMEOUT)
            .until(() -> "complete".equals(evaluate("document.readyState")));
    }

    /**
     * A JavaScript expression's value in the page (promises awaited), as Jackson reads JSON: strings, numbers,
     * booleans, maps, lists or null. An exception thrown by the expression fails.
     */
    Object evaluate(String expression) {
        JsonNode result = send("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true,
            "awaitPromise", true));
        if (result.has("exceptionDetails")) {
            throw new IllegalStateException("evaluating " + expression + " threw "
                + result.get("exceptionDetails"));
        }
        JsonNode value = result.get("result").get("value");
        return value == null ? null : JSON.treeToValue(value, Object.class);
    }

    /** A JavaScript string literal of the text (JSON's is one). */
    static String literal(String text) {
        return JSON.writeValueAsString(text);
    }

    /** Clicks the element the selector finds, with the mouse, at its centre (scrolled into view). */
    void click(String selector) {
        clickElement("document.querySelector(" + literal(selector) + ")");
    }

    /** Clicks the element the expression evaluates to. */
    void clickElement(String element) {
        Object centre = evaluate("(() => { const e = " + element + "; if (!e) return null;"
            + " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            + " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()");
        if (!(centre instanceof Map<?, ?> point)) {
            throw new IllegalStateException("nothing to click: " + element);
        }
        for (String type : List.of("mousePressed", "mouseReleased")) {
            send("Input.dispatchMouseEvent", Map.of("type", type, "x", point.get("x"), "y", point.get("y"),
                "button", "left", "clickCount", 1));
        }
    }

    /** Replaces the text of the input the selector finds, as typed. */
    void type(String selector, String text) {
        evaluate("(() => { const e = document.querySelector(" + literal(selector) + "); e.focus(); e.select(); })()");
        send("Input.insertText", Map.of("text", text));
    }

    /** Saves a PNG of the viewport. */
    void screenshot(Path file) throws IOException {
        String data = send("Page.captureScreenshot", Map.of("format", "png")).get("data").asString();
        Files.createDirectories(file.getParent());
        Files.write(file, Base64.getDecoder().decode(data));
    }

    /** What the page logged and threw. */
    String log() {
        synchronized (log) {
            return String.join("\n", log);
        }
    }

    private void received(String text) {
        JsonNode message = JSON.readTree(text);
        if (message.has("id")) {
            CompletableFuture<JsonNode> answer = pending.get(message.get("id").asInt());
            if (answer != null) {
                answer.complete(message);
            }
            return;
        }
        String method = message.path("method").asString("");
        if (method.equals("Runtime.consoleAPICalled")) {
            log.add("console." + message.path("params").path("type").asString("") + ": "
                + message.path("params").path("args"));
        } else if (method.equals("Runtime.exceptionThrown")) {
            log.add("exception: " + message.path("params").path("exceptionDetails"));
        }
    }

    @Override
    public void close() throws IOException {
        try {
            socket.sendText("{\"id\":" + ids.incrementAndGet() + ",\"method\":\"Browser.close\"}", true);
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            socket.abort();
            kill(process);
            RunningBroker.delete(profile);
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
    }

    /** Ends the browser and every process it started (renderers, zygotes). */
    private static void kill(Process process) {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            for (ProcessHandle child : children) {
                child.onExit().get(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("a Chromium process did not end", e);
        }
    }

    /** Joins the WebSocket's text fragments into messages; runs on the HTTP client's threads. */
    private static final class Listener implements WebSocket.Listener {
        private final StringBuilder partial = new StringBuilder();
        /** Set before the first command is sent, so before any message arrives. */
        private volatile HeadlessChromium owner;

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                String text = partial.toString();
                partial.setLength(0);
                owner.received(text);
            }
            webSocket.request(1);
            return null;
        }
    }
}
