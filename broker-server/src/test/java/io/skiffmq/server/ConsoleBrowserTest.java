package io.skiffmq.server;

import static io.skiffmq.server.HeadlessChromium.literal;
import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The web console in a headless Chromium against a real broker, as a user uses it: logging in through the form,
 * following the hash routes, clicking with the mouse and typing, then waiting until the page shows what the broker
 * holds. Queues and connections are made with the RabbitMQ 0-9-1 client. One broker and one browser for the
 * class; a screenshot of each page is kept under {@code target/console-screenshots/}. Without a Chromium binary
 * the class is skipped, unless {@code REQUIRE_BROWSER_TESTS=1} (CI) makes that a failure.
 */
@ExtendWith(LeakDetection.class)
class ConsoleBrowserTest {
    static final Duration TIMEOUT = Duration.ofSeconds(20);
    static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    /** A queue name a user could type, that would run as script or markup if the console ever parsed it. */
    static final String HOSTILE_NAME = "<img src=x onerror=\"window.hacked=1\"><script>window.hacked=2</script>&amp;'/";

    private static RunningBroker broker;
    private static HeadlessChromium chromium;
    private static HttpApiClient api;

    @BeforeAll
    static void start() throws Exception {
        Optional<Path> binary = HeadlessChromium.find();
        if (binary.isEmpty()) {
            String reason = "no Chromium on the PATH (looked for " + HeadlessChromium.BINARIES
                + "); install Debian's chromium package to run the web console's browser tests";
            if ("1".equals(System.getenv("REQUIRE_BROWSER_TESTS"))) {
                throw new AssertionError(reason + " (REQUIRE_BROWSER_TESTS=1 requires them)");
            }
            assumeTrue(false, reason);
        }
        // rates sampled often, so a few seconds of traffic move them
        broker = RunningBroker.start("collect-statistics-interval=200");
        api = HttpApiClient.guest(broker);
        chromium = HeadlessChromium.launch(binary.get());
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (chromium != null) {
                chromium.close();
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }

    private static String base() {
        return "http://127.0.0.1:" + broker.managementPort() + "/";
    }

    /**
     * Opens a page of the console, logging in as guest first when the login form shows. Always a fresh load (a
     * hash change alone would keep the previous page's state until the new route ran).
     */
    private static void open(String hash) {
        chromium.navigate("about:blank");
        chromium.navigate(base() + hash);
        awaitTrue("the login form or the page", "!document.getElementById('login').hidden"
            + " || !document.getElementById('page').hidden");
        if (Boolean.TRUE.equals(chromium.evaluate("!document.getElementById('login').hidden"))) {
            logIn("guest", "guest");
            awaitTrue("the page after logging in", "!document.getElementById('page').hidden");
        }
        awaitTrue("the page refreshed once", "document.getElementById('page').dataset.refreshed !== undefined");
    }

    private static void logIn(String user, String password) {
        chromium.type("#login-user", user);
        chromium.type("#login-password", password);
        chromium.click("#login-submit");
    }

    /** Waits until the expression is truthy in the page. */
    private static void awaitTrue(String what, String expression) {
        try {
            Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> truthy(chromium.evaluate(expression)));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("the page never showed " + what + " (" + expression + "); shown: "
                + chromium.evaluate("document.body.innerText") + "\npage log:\n" + chromium.log(), e);
        }
    }

    private static boolean truthy(Object value) {
        return value != null && !Boolean.FALSE.equals(value) && !"".equals(value)
            && !(value instanceof Number n && n.doubleValue() == 0);
    }

    private static String text(String selector) {
        return (String) chromium.evaluate("(document.querySelector(" + literal(selector) + ") || {}).textContent");
    }

    /** The text of a cell of the row whose data-name is the name (column from 0). */
    private static String cellExpression(String table, String name, int column) {
        return "(() => { const r = [...document.querySelectorAll('#" + table + " tbody tr')]"
            + ".find(tr => tr.dataset.name === " + literal(name) + "); return r ? r.cells[" + column
            + "].textContent : null; })()";
    }

    private static void screenshot(String name) throws Exception {
        chromium.screenshot(SCREENSHOTS.resolve(name + ".png"));
    }

    private static Connection connect() throws Exception {
        return VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection("console-test");
    }

    private static void publish(Channel channel, String queue, int count) throws Exception {
        channel.confirmSelect();
        for (int i = 0; i < count; i++) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                ("message " + i).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
    }

    @Test
    void theQueueTableShowsQueuesDeclaredOverAmqpWithTheirCountsAndNamesAsText() throws Exception {
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            channel.queueDeclare("console-orders", true, false, false, null);
            channel.queueDeclare(HOSTILE_NAME, false, false, false, null);
            publish(channel, "console-orders", 3);
            publish(channel, HOSTILE_NAME, 1);
            open("#/queues");
            awaitTrue("console-orders with 3 ready", cellExpression("queues", "console-orders", 4) + " === '3'");
            assertThat(chromium.evaluate(cellExpression("queues", "console-orders", 6))).isEqualTo("3");
            assertThat(chromium.evaluate(cellExpression("queues", "console-orders", 0))).isEqualTo("/");
            awaitTrue("the hostile name as text", cellExpression("queues", HOSTILE_NAME, 1) + " === "
                + literal(HOSTILE_NAME));
            assertThat(chromium.evaluate("document.querySelectorAll('#page img, #page script').length"))
                .isEqualTo(0);
            assertThat(chromium.evaluate("window.hacked === undefined")).isEqualTo(true);
            screenshot("queues");
            channel.queueDelete(HOSTILE_NAME);
        }
    }

    @Test
    void aQuorumQueuesPageShowsItsLeaderAndMembers() throws Exception {
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            channel.queueDeclare("console-qq", true, false, false, Map.of("x-queue-type", "quorum"));
        }
        Object node = api.get("/api/overview").map().get("node");
        open("#/queues/%2F/console-qq");
        awaitTrue("the queue's members", "document.getElementById('queue-members') !== null");
        assertThat(text("#queue-leader")).isEqualTo(node);
        assertThat(text("#queue-members")).isEqualTo(node);
        assertThat(text("#queue-online")).isEqualTo(node);
        assertThat(api.delete("/api/queues/%2F/console-qq").status()).isEqualTo(204);
    }

    @Test
    void theQueuePagePublishesGetsPurgesAndDeletes() throws Exception {
        String name = "console <work> & \"co\"/ü";
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            channel.queueDeclare(name, true, false, false, null);
        }
        open("#/queues/%2F/" + seg(name));
        assertThat(text("#queue-name")).isEqualTo(name);
        awaitTrue("the queue's details", "document.getElementById('queue-total') !== null");
        assertThat(text("#queue-total")).isEqualTo("0");
        assertThat(text("#queue-node")).as("a classic queue's node").isEqualTo(api.get("/api/overview").map()
            .get("node"));
        assertThat(text("#queue-policy")).isEmpty();
        assertThat(api.put("/api/policies/%2F/console-limit", Map.of("pattern", "^" + name + "$", "definition",
            Map.of("max-length", 10))).status()).isEqualTo(201);
        assertThat(api.put("/api/operator-policies/%2F/console-cap", Map.of("pattern", "^" + name + "$",
            "definition", Map.of("max-length", 5))).status()).isEqualTo(201);
        awaitTrue("the queue's policy", "(document.getElementById('queue-policy') || {}).textContent"
            + " === 'console-limit'");
        assertThat(text("#queue-operator-policy")).isEqualTo("console-cap");
        assertThat(text("#queue-effective-policy")).isEqualTo("{\"max-length\":5}");
        assertThat(api.delete("/api/policies/%2F/console-limit").status()).isEqualTo(204);
        assertThat(api.delete("/api/operator-policies/%2F/console-cap").status()).isEqualTo(204);

        chromium.type("#publish-payload", "hello from the console");
        chromium.click("#publish");
        awaitTrue("the publish notice", "document.getElementById('message').textContent === 'Message published.'");
        awaitTrue("one message", "(document.getElementById('queue-total') || {}).textContent === '1'");

        chromium.click("#get");
        awaitTrue("the message got", "(document.querySelector('#messages pre.payload') || {}).textContent"
            + " === 'hello from the console'");
        // requeued: still there
        assertThat(queueMessages(name)).isEqualTo(1);
        awaitTrue("one message after get", "document.getElementById('queue-total').textContent === '1'");
        screenshot("queue");

        chromium.click("#purge");
        awaitTrue("the confirmation", "document.getElementById('confirm').open");
        chromium.click("#confirm-ok");
        awaitTrue("the purge notice", "document.getElementById('message').textContent.includes('purged')");
        awaitTrue("no message", "document.getElementById('queue-total').textContent === '0'");
        assertThat(queueMessages(name)).isEqualTo(0);

        chromium.click("#get");
        awaitTrue("an empty queue", "document.getElementById('queue-empty') !== null");

        chromium.click("#delete");
        awaitTrue("the confirmation", "document.getElementById('confirm').open");
        chromium.click("#confirm-ok");
        awaitTrue("the queue list", "location.hash === '#/queues'"
            + " && document.getElementById('message').textContent.includes('deleted')");
        assertThat(api.get("/api/queues/%2F/" + seg(name)).status()).isEqualTo(404);
    }

    @Test
    void anApiErrorIsShownToTheUser() throws Exception {
        assertThat(api.put("/api/queues/%2F/console-gone", Map.of("durable", false)).status()).isEqualTo(201);
        open("#/queues/%2F/console-gone");
        awaitTrue("the queue's details", "document.getElementById('queue-total') !== null");
        assertThat(api.delete("/api/queues/%2F/console-gone").status()).isEqualTo(204);
        chromium.click("#get");
        awaitTrue("the API's error", "document.getElementById('message').className === 'error'"
            + " && !document.getElementById('message').hidden");
        assertThat(text("#message")).isEqualTo("404 Object Not Found: Not Found");
        // still logged in
        assertThat(chromium.evaluate("document.getElementById('login').hidden")).isEqualTo(true);
    }

    private static long queueMessages(String name) throws Exception {
        return ((Number) api.get("/api/queues/%2F/" + seg(name)).map().get("messages")).longValue();
    }

    @Test
    void theConnectionsPageClosesAConnectionWithAReason() throws Exception {
        Connection connection = connect();
        CompletableFuture<ShutdownSignalException> closed = new CompletableFuture<>();
        connection.addShutdownListener(closed::complete);
        try {
            int port = ((com.rabbitmq.client.impl.AMQConnection) connection).getLocalPort();
            Awaitility.await().atMost(TIMEOUT).until(() -> mine(port).isPresent());
            String name = (String) mine(port).orElseThrow().get("name");
            open("#/connections");
            awaitTrue("the connection's row", cellExpression("connections", name, 3) + " === 'AMQP 0-9-1'");
            assertThat(chromium.evaluate(cellExpression("connections", name, 2))).isEqualTo("guest");
            screenshot("connections");

            chromium.clickElement("[...document.querySelectorAll('#connections tbody tr')].find(tr =>"
                + " tr.dataset.name === " + literal(name) + ").querySelector('.close-connection')");
            awaitTrue("the confirmation", "document.getElementById('confirm').open");
            chromium.type("#confirm-reason", "console test");
            chromium.click("#confirm-ok");

            ShutdownSignalException signal = closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            AMQP.Connection.Close close = (AMQP.Connection.Close) signal.getReason();
            assertThat(close.getReplyCode()).isEqualTo(320);
            assertThat(close.getReplyText()).isEqualTo("CONNECTION_FORCED - console test");
            awaitTrue("the closed notice", "document.getElementById('message').textContent.includes('closed')");
        } finally {
            if (connection.isOpen()) {
                connection.abort();
            }
        }
    }

    /** The API's connection whose peer port is the client's local port. */
    private static Optional<Map<String, Object>> mine(int port) throws Exception {
        List<Map<String, Object>> listed = api.get("/api/connections").list();
        return listed.stream().filter(c -> Integer.valueOf(port).equals(c.get("peer_port"))
            && "running".equals(c.get("state"))).findFirst();
    }

    @Test
    void theOverviewChartsRatesAndQueuedMessagesThatMoveWithTraffic() throws Exception {
        open("#/");
        chromium.evaluate("(() => { const s = document.getElementById('refresh'); s.value = '2000';"
            + " s.dispatchEvent(new Event('change')); })()");
        assertThat(chromium.evaluate("document.querySelector('canvas#chart-rates') !== null"
            + " && document.querySelector('canvas#chart-queued') !== null")).isEqualTo(true);
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            channel.queueDeclare("console-traffic", false, false, false, null);
            // publishes until the page shows a publish rate: the page polls every 2 s, the broker samples every 0.2 s
            Awaitility.await("a publish rate on the overview").atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    publish(channel, "console-traffic", 20);
                    return Double.parseDouble(text("#rate-publish").isEmpty() ? "0" : text("#rate-publish")) > 0;
                });
            awaitTrue("queued messages", "Number(document.getElementById('queued-total').textContent"
                + ".replace(/,/g, '')) > 0");
            awaitTrue("several samples drawn", "Number(document.getElementById('chart-rates').dataset.samples) >= 2");
            assertThat(Integer.parseInt(text("#total-queues"))).isGreaterThanOrEqualTo(1);
            assertThat(Integer.parseInt(text("#total-connections"))).isGreaterThanOrEqualTo(1);
            // the nodes, as RabbitMQ's overview lists them (this one, running, with its readings)
            String node = (String) api.get("/api/overview").map().get("node");
            awaitTrue("the node listed", "document.querySelector('#nodes tbody tr[data-running=\"true\"]') !== null");
            assertThat(text("#nodes tbody tr")).startsWith(node).contains("running").contains("MiB");
            screenshot("overview");
            channel.queueDelete("console-traffic");
        }
    }

    @Test
    void theExchangesPageListsTheDefaultExchanges() throws Exception {
        open("#/exchanges");
        awaitTrue("amq.topic", cellExpression("exchanges", "amq.topic", 2) + " === 'topic'");
        assertThat(chromium.evaluate(cellExpression("exchanges", "", 1))).isEqualTo("(AMQP default)");
        screenshot("exchanges");
    }

    @Test
    void aBadPasswordShowsTheApisReasonOnTheLoginForm() throws Exception {
        open("#/");
        chromium.click("#logout");
        awaitTrue("the login form", "!document.getElementById('login').hidden");
        logIn("guest", "not the password");
        awaitTrue("the login error", "!document.getElementById('login-error').hidden");
        assertThat(text("#login-error")).isEqualTo("Login failed: Not_Authorized");
        assertThat(chromium.evaluate("sessionStorage.length")).isEqualTo(0);
        screenshot("login");

        // right password, but no management tag: the API's reason
        broker.admin().putUser("console-nobody", "pw", List.of());
        logIn("console-nobody", "pw");
        awaitTrue("the tag refusal", "document.getElementById('login-error').textContent"
            + " === 'Login failed: Not management user'");
        assertThat(chromium.evaluate("document.getElementById('page').hidden")).isEqualTo(true);
    }
}
