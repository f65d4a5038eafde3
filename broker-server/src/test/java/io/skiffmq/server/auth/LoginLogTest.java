package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.List;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.AbstractList;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class LoginLogTest {
    /** Our System.Logger calls reach Logback through SLF4J: what LoginLog logs is read back from there. */
    private final Logger logger = (Logger) LoggerFactory.getLogger(LoginLog.class);
    private final ListAppender<ILoggingEvent> capture = new ListAppender<>();
    private final List<String> lines = new AbstractList<>() {
        @Override
        public String get(int index) {
            return capture.list.get(index).getFormattedMessage();
        }

        @Override
        public int size() {
            return capture.list.size();
        }
    };
    private long now;
    /** The summaries the log scheduled, run by the test when their time comes. */
    private final List<Runnable> scheduled = new java.util.ArrayList<>();
    private final List<Long> delays = new java.util.ArrayList<>();
    private final io.skiffmq.server.logging.SummarizedLog.Timer timer = (task, delayNanos) -> {
        scheduled.add(task);
        delays.add(delayNanos);
    };

    @BeforeEach
    void listen() {
        capture.start();
        logger.addAppender(capture);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(capture);
    }

    @Test
    void aFailureIsOneLineWithUserAddressAndMechanismNeverThePassword() throws Exception {
        new LoginLog(() -> now, timer).failed(new Credentials("PLAIN", "alice", "s3cret"),
            InetAddress.getByName("192.0.2.7"));
        assertThat(lines).containsExactly("PLAIN login refused: user 'alice' from 192.0.2.7 - invalid credentials");
    }

    @Test
    void aStormOfRateLimitedLoginsIsOneLineThenATimedSummaryEvenWhenNothingFollows() throws Exception {
        LoginLog log = new LoginLog(() -> now, timer);
        InetAddress attacker = InetAddress.getByName("192.0.2.66");
        for (int i = 0; i < 1000; i++) {
            log.rateLimited(attacker);
            now += 1_000_000; // 1 ms apart: a second in all, then nothing more
        }
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).startsWith("1 login attempt(s) refused over the failed-login rate limit")
            .contains("from 192.0.2.66");
        assertThat(scheduled).hasSize(1);
        assertThat(delays).containsExactly(LoginLog.SUMMARY_INTERVAL_NANOS);
        now += LoginLog.SUMMARY_INTERVAL_NANOS;
        scheduled.get(0).run(); // the timer fires with no login after the storm
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).startsWith("999 login attempt(s) refused").contains("in the last 6.0 s")
            .contains("the latest from 192.0.2.66");
        scheduled.get(0).run(); // nothing more suppressed: no second summary
        assertThat(lines).hasSize(2);
    }

    @Test
    void aLaterStormStartsANewWindow() throws Exception {
        LoginLog log = new LoginLog(() -> now, timer);
        InetAddress attacker = InetAddress.getByName("192.0.2.66");
        log.rateLimited(attacker);
        log.rateLimited(attacker);
        scheduled.get(0).run();
        now += 60_000_000_000L;
        log.rateLimited(attacker); // a token again: logged on its own
        log.rateLimited(attacker);
        assertThat(scheduled).hasSize(2);
        scheduled.get(1).run();
        assertThat(lines).hasSize(4);
        assertThat(lines.get(3)).startsWith("1 login attempt(s) refused").contains("in the last 0.0 s");
    }
}
