package io.skiffmq.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.slf4j.LoggerFactory;

/**
 * Every log event of the test's JVM from {@link #start} to {@link #close}, read back by the test: the broker's own
 * loggers ({@code io.skiffmq}) at DEBUG, the rest at the test configuration's level (WARN). Our System.Logger calls
 * reach Logback through SLF4J. Events arrive from the event loops; the test thread reads them at any time.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final Logger ours = (Logger) LoggerFactory.getLogger("io.skiffmq");
    private Level oursBefore;

    public static LogCapture capture() {
        LogCapture capture = new LogCapture();
        capture.setContext(capture.root.getLoggerContext());
        capture.setName("capture");
        capture.start();
        capture.oursBefore = capture.ours.getLevel();
        capture.ours.setLevel(Level.DEBUG);
        // our DEBUG lines come here only, not to the console; other loggers' come through the root
        capture.ours.setAdditive(false);
        capture.ours.addAppender(capture);
        capture.root.addAppender(capture);
        return capture;
    }

    @Override
    protected void append(ILoggingEvent event) {
        event.prepareForDeferredProcessing();
        events.add(event);
    }

    /** The messages (arguments in place) of the events at {@code level} that match. */
    public List<String> lines(Level level, Predicate<String> matching) {
        return events.stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage)
            .filter(matching).toList();
    }

    /** The events at {@code level}. */
    public List<ILoggingEvent> events(Level level) {
        return events.stream().filter(e -> e.getLevel() == level).toList();
    }

    /** Every event at ERROR, with its message. */
    public List<String> errors() {
        return lines(Level.ERROR, m -> true);
    }

    @Override
    public void close() {
        root.detachAppender(this);
        ours.detachAppender(this);
        ours.setAdditive(true);
        ours.setLevel(oursBefore);
        stop();
    }
}
