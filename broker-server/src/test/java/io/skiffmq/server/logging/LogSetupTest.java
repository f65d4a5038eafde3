package io.skiffmq.server.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The broker's logging as {@code SkiffMq} sets it up: lines are written by Logback's thread, not the caller. */
class LogSetupTest {
    @Test
    void aLineIsQueuedForTheConsoleNotWrittenByTheThreadThatLogsIt() throws Exception {
        // issue 30: an event loop formatted and wrote a line per connection opened (15 % of the broker's samples
        // opening 15,000 connections), and would stop on a console nobody reads
        PrintStream original = System.out;
        CountDownLatch consoleFree = new CountDownLatch(1);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        OutputStream blocked = new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                try {
                    consoleFree.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                synchronized (written) {
                    written.write(b, off, len);
                }
            }
        };
        System.setOut(new PrintStream(blocked, true, StandardCharsets.UTF_8));
        try {
            LogSetup.apply(LogSettings.defaults());
            Thread loop = new Thread(() -> System.getLogger("io.skiffmq.test").log(System.Logger.Level.INFO,
                "connection {0}: user ''{1}'' authenticated and granted access to vhost ''{2}''", "c1", "guest", "/"));
            loop.start();
            loop.join(30_000);
            assertThat(loop.isAlive()).as("the logging thread waits for a console nobody reads").isFalse();
            consoleFree.countDown();
            LogSetup.stop();
            synchronized (written) {
                assertThat(written.toString(StandardCharsets.UTF_8))
                    .contains("INFO  [Thread-").contains("connection c1: user 'guest' authenticated and granted "
                        + "access to vhost '/'");
            }
        } finally {
            consoleFree.countDown();
            System.setOut(original);
            LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
            context.reset();
            new ContextInitializer(context).autoConfig(); // logback-test.xml again, for the tests after this one
        }
    }
}
