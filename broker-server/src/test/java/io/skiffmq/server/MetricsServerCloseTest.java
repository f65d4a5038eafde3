package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.skiffmq.server.metrics.MetricsServer;
import io.skiffmq.server.metrics.PrometheusSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Stopping the Prometheus endpoint is bounded, whatever a scrape is doing. */
class MetricsServerCloseTest {
    @Test
    void closeReturnsWhileAScrapeHangsInACollector() throws Exception {
        // issue 30: SIGTERM sometimes hung in MetricsServer.close, which waited without a bound for its loop
        try (RunningBroker broker = RunningBroker.start()) {
            MetricsServer metrics = new MetricsServer(broker.broker(), new PrometheusSettings(0, false), "127.0.0.1");
            InetSocketAddress address = metrics.start();
            CountDownLatch inScrape = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Gauge.builder("test_hanging", () -> {
                inScrape.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 1;
            }).register(metrics.registry());
            HttpClient http = HttpClient.newHttpClient();
            try {
                http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.discarding());
                assertThat(inScrape.await(60, TimeUnit.SECONDS)).as("the scrape reached the collector").isTrue();
                Thread closer = new Thread(metrics::close, "closer");
                closer.start();
                closer.join(60_000);
                assertThat(closer.isAlive()).as("close still waiting for the scrape").isFalse();
            } finally {
                release.countDown();
            }
        }
    }
}
