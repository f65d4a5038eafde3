package io.skiffmq.server.connection;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.channel.embedded.EmbeddedChannel;
import io.skiffmq.server.LogCapture;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One connection's end is decided once and logged once; what comes after is a no-op (or, for a bug, an ERROR); a
 * flood of ends is limited per reason with a summary, internal errors never. On embedded channels, with a clock the
 * test moves.
 */
class ConnectionEndingTest {
    private long now;
    private final ConnectionEnds ends = new ConnectionEnds(() -> now);
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private LogCapture log;

    @BeforeEach
    void capture() {
        log = LogCapture.capture();
    }

    @AfterEach
    void release() {
        log.close();
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private ConnectionEnding ending() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.freezeTime();
        channels.add(channel);
        return ConnectionEnding.of(channel, ends);
    }

    private List<String> lines(Level level) {
        return log.lines(level, m -> true);
    }

    @Test
    void theFirstEndCountsAndLogsOnceAndLaterOnesAreNoOps() {
        ConnectionEnding ending = ending();
        assertThat(ending.end(ConnectionEnd.PROTOCOL_ERROR, "amqp:decode-error bad")).isTrue();
        assertThat(ending.end(ConnectionEnd.PROTOCOL_ERROR, "again")).isFalse();
        assertThat(ending.failed(new ClosedChannelException())).as("a write after our close").isNull();
        assertThat(ending.failed(new IOException("Connection reset by peer"))).isNull();
        ending.inactive();
        assertThat(ending.end()).isEqualTo(ConnectionEnd.PROTOCOL_ERROR);
        assertThat(lines(Level.INFO)).containsExactly("connection embedded -> embedded: closed (protocol_error): "
            + "amqp:decode-error bad");
        assertThat(lines(Level.DEBUG)).hasSize(2).allMatch(m -> m.contains("after the connection ended"));
        assertThat(lines(Level.ERROR)).isEmpty();
        assertThat(ends.count(ConnectionEnd.PROTOCOL_ERROR)).isEqualTo(1);
        assertThat(ends.total()).isEqualTo(1);
    }

    @Test
    void aResetIsAnInfoLineWithoutAStack() {
        ConnectionEnding ending = ending();
        assertThat(ending.failed(new IOException("Connection reset by peer"))).isEqualTo(ConnectionEnd.RESET);
        assertThat(lines(Level.INFO)).containsExactly(
            "connection embedded -> embedded: closed (reset): IOException: Connection reset by peer");
        assertThat(log.events(Level.INFO).get(0).getThrowableProxy()).isNull();
    }

    @Test
    void theSocketClosingFirstIsADebugEof() {
        ConnectionEnding ending = ending();
        ending.inactive();
        assertThat(ending.end()).isEqualTo(ConnectionEnd.EOF);
        assertThat(lines(Level.DEBUG)).containsExactly(
            "connection embedded -> embedded: closed (eof): the peer closed the socket");
        assertThat(lines(Level.INFO)).isEmpty();
    }

    @Test
    void aBugIsAnErrorWithItsStackEvenAfterTheEnd() {
        ConnectionEnding first = ending();
        assertThat(first.failed(new IllegalStateException("bug"))).isEqualTo(ConnectionEnd.INTERNAL_ERROR);
        ConnectionEnding second = ending();
        second.end(ConnectionEnd.CLIENT_CLOSE, "the client closed");
        assertThat(second.failed(new NullPointerException("late bug"))).isNull();
        List<ILoggingEvent> errors = log.events(Level.ERROR);
        assertThat(errors).hasSize(2).allMatch(e -> e.getThrowableProxy() != null);
        assertThat(errors.get(0).getFormattedMessage())
            .isEqualTo("connection embedded -> embedded: closed (internal_error): internal error: "
                + "java.lang.IllegalStateException: bug");
        assertThat(errors.get(1).getFormattedMessage())
            .isEqualTo("connection embedded -> embedded: internal error after the connection ended (client_close)");
    }

    @Test
    void aFloodIsLimitedPerReasonAndSummarizedWhenTheWindowEnds() {
        EmbeddedChannel scheduler = null;
        for (int i = 0; i < 20; i++) {
            ending().end(ConnectionEnd.PROTOCOL_ERROR, "garbage " + i);
            if (i == ConnectionEnds.BURST) {
                scheduler = channels.get(i); // the first suppressed line's loop has the summary
            }
        }
        ending().end(ConnectionEnd.HANDSHAKE_TIMEOUT, "no protocol header within 10000 ms");
        for (int i = 0; i < 20; i++) {
            ending().failed(new IllegalStateException("bug " + i));
        }
        assertThat(lines(Level.INFO)).hasSize(ConnectionEnds.BURST + 1)
            .as("another reason has its own limit").contains("connection embedded -> embedded: closed "
                + "(handshake_timeout): no protocol header within 10000 ms");
        assertThat(lines(Level.ERROR)).as("internal errors are never suppressed").hasSize(20);
        now += ConnectionEnds.SUMMARY_DELAY_NANOS;
        scheduler.advanceTimeBy(ConnectionEnds.SUMMARY_DELAY_NANOS, TimeUnit.NANOSECONDS);
        scheduler.runScheduledPendingTasks();
        assertThat(lines(Level.INFO)).hasSize(ConnectionEnds.BURST + 2).last()
            .isEqualTo("suppressed 15 similar messages in the last 5.0 s: connection closed (protocol_error)");
        assertThat(ends.count(ConnectionEnd.PROTOCOL_ERROR)).as("every end is counted").isEqualTo(20);
    }
}
