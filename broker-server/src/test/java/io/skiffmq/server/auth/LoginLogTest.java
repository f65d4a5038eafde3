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
        new LoginLog(() -> now).failed(new Credentials("PLAIN", "alice", "s3cret"),
            InetAddress.getByName("192.0.2.7"));
        assertThat(lines).containsExactly("PLAIN login refused: user 'alice' from 192.0.2.7 - invalid credentials");
    }

    @Test
    void rateLimitedLoginsAreSummarizedAtMostEveryFiveSeconds() throws Exception {
        LoginLog log = new LoginLog(() -> now);
        InetAddress attacker = InetAddress.getByName("192.0.2.66");
        for (int i = 0; i < 1000; i++) {
            log.rateLimited(attacker);
            now += 1_000_000; // 1 ms apart: a second in all
        }
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).startsWith("1 login attempt(s) refused over the failed-login rate limit");
        assertThat(log.suppressed()).isEqualTo(999);
        now += LoginLog.SUMMARY_INTERVAL_NANOS;
        log.rateLimited(attacker);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).startsWith("1000 login attempt(s) refused").contains("the latest from 192.0.2.66");
        assertThat(log.suppressed()).isZero();
    }
}
