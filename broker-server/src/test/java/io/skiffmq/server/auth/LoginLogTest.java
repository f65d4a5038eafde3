package io.skiffmq.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class LoginLogTest {
    private final Logger logger = Logger.getLogger(LoginLog.class.getName());
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            lines.add(java.text.MessageFormat.format(record.getMessage(), record.getParameters()));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private long now;

    @BeforeEach
    void listen() {
        logger.addHandler(capture);
    }

    @AfterEach
    void stop() {
        logger.removeHandler(capture);
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
