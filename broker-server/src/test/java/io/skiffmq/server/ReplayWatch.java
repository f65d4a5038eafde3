package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.skiffmq.codec.testing.LeakDetection;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.LoggerFactory;

/**
 * What the corpus replay tests watch besides the replay: the ERROR lines logged meanwhile (a Logback
 * {@link ListAppender} on the root logger), the heap after GC before and after, leaked buffers, and the bystander.
 * Used by the test thread only (the appender is Logback's, thread-safe).
 */
final class ReplayWatch implements AutoCloseable {
    /**
     * The replay's broker: plain AMQP allowed (so that inputs after the AMQP header reach the frame decoder and
     * the connection's states, not only the refusal of the header), a short handshake timeout, so inputs that stop mid-handshake end within the
     * client's {@link #DEADLINE} (RabbitMQ's default is 10 s; ours too, outside this test).
     */
    static final String[] BROKER_SETTINGS = {"handshake-timeout=1000", "allow-plain-amqp=true"};
    /** Connections in flight at once: enough to keep two busy cores busy, few enough for the bystander. */
    static final int CONCURRENCY = 32;
    /** A connection the broker has not closed by then is closed by the client (twice the handshake timeout). */
    static final Duration DEADLINE = Duration.ofMillis(2500);
    /**
     * How far the heap after GC may end above where it started: the queues' and connections' bookkeeping that
     * settles in (the journal's index, pooled thread caches), not a leak that grows with the 8,883 connections,
     * which would show as hundreds of MB.
     */
    static final long HEAP_TOLERANCE = 64L << 20;
    /** The longest a bystander's round trip may wait on two busy cores while the replay runs. */
    static final long BYSTANDER_MAX_GAP_MILLIS = 10_000;

    private final Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private long heapAtStart;

    ReplayWatch() {
        log.start();
        root.addAppender(log);
    }

    /** The bystander is running: the heap is measured now, after its first round trips. */
    void started(Bystander bystander) {
        await().atMost(Duration.ofSeconds(30)).until(() -> bystander.roundTrips() >= 20 || bystander.error() != null);
        bystander.assertHealthy(20, BYSTANDER_MAX_GAP_MILLIS);
        heapAtStart = heapAfterGc();
    }

    /**
     * Prints the outcomes and the WARN and ERROR lines logged, then checks that hostile peers caused no ERROR line
     * (only a broker bug logs one) and no {@code amqp:internal-error} close.
     */
    void report(String what, CorpusReplay.Result result, long internalErrors) {
        long errors = log.list.stream().filter(e -> e.getLevel() == Level.ERROR).count();
        Map<String, Integer> byMessage = new TreeMap<>();
        for (ILoggingEvent event : log.list) {
            if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
                // one line per kind: connection names and numbers (ports, sizes, error numbers) left out
                String text = event.getFormattedMessage().replaceAll("connection \\S+ -> \\S+: ", "")
                    .replaceAll("[0-9]+", "N");
                String message = event.getLevel() + " " + event.getLoggerName().replaceAll(".*\\.", "") + ": "
                    + (text.length() > 100 ? text.substring(0, 100) + "…" : text)
                    + (event.getThrowableProxy() == null ? "" : " [" + event.getThrowableProxy().getClassName() + ": "
                        + String.valueOf(event.getThrowableProxy().getMessage()).replaceAll("[0-9]+", "N") + "]");
                byMessage.merge(message, 1, Integer::sum);
            }
        }
        StringBuilder out = new StringBuilder(what).append(": ").append(result.summary());
        out.append(String.format("  ERROR lines logged: %d; amqp:internal-error closes: %d%n", errors, internalErrors));
        byMessage.forEach((message, count) -> out.append(String.format("  %6d × %s%n", count, message)));
        System.out.print(out);
        assertThat(errors).as("ERROR lines logged (see above)").isZero();
        assertThat(internalErrors).as("amqp:internal-error closes").isZero();
    }

    void assertBystanderHealthy(Bystander bystander) {
        long before = bystander.roundTrips();
        await().atMost(Duration.ofSeconds(30))
            .until(() -> bystander.roundTrips() >= before + 10 || bystander.error() != null);
        bystander.assertHealthy(before + 10, BYSTANDER_MAX_GAP_MILLIS);
        System.out.printf("  bystander: %d round trips, longest wait %d ms%n", bystander.roundTrips(),
            bystander.longestGapMillis());
    }

    /** A new client gets in and does round trips. */
    void assertRoundTrips(Bystander fresh) {
        await().atMost(Duration.ofSeconds(30)).until(() -> fresh.roundTrips() >= 5 || fresh.error() != null);
        fresh.assertHealthy(5, BYSTANDER_MAX_GAP_MILLIS);
    }

    void assertNoLeaksAndHeapBack() {
        assertThat(LeakDetection.collectLeaks()).as("leaked buffers").isEmpty();
        long heapAtEnd = heapAfterGc();
        System.out.printf("  heap after GC: %d MB at the start, %d MB at the end (tolerance +%d MB)%n",
            heapAtStart >> 20, heapAtEnd >> 20, HEAP_TOLERANCE >> 20);
        assertThat(heapAtEnd).as("heap after GC, bytes").isLessThan(heapAtStart + HEAP_TOLERANCE);
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Override
    public void close() {
        root.detachAppender(log);
    }
}
