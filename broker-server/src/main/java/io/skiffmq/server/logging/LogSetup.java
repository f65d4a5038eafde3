package io.skiffmq.server.logging;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Sets Logback, the one logging backend, up from {@link LogSettings}: one console appender with the text layout
 * ({@link #TEXT_PATTERN}) or Logback's JSON encoder, the root level, and {@code java.util.logging} routed into it.
 * Our own {@code System.Logger} calls reach SLF4J through {@code slf4j-jdk-platform-logging}; Netty and Chronicle
 * log through SLF4J themselves. Called once by {@code SkiffMq} from main, before the listener starts.
 *
 * <p>The console appender sits behind an {@link AsyncAppender}: the logging thread (often an event loop: a line per
 * connection opened, as RabbitMQ logs) only formats the message and queues the event; one thread of Logback's lays
 * it out and writes it. Writing on the event loop cost 15 % of the broker's Java samples while 15,000 connections
 * opened, and stdout a pipe nobody drained would have stopped the loop (docs/benchmarks.md). Nothing is dropped:
 * a full queue ({@link #QUEUE_SIZE} events) makes the logging thread wait, as the console itself did. {@link #stop}
 * writes what is queued; {@code SkiffMq} calls it last when the broker stops.
 */
public final class LogSetup {
    /** One line per event: ISO-8601 time with offset, level, thread, logger, message. */
    static final String TEXT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n";
    /** Events queued for the console at most: a burst of connections' lines, far beyond a steady rate. */
    static final int QUEUE_SIZE = 8192;

    private LogSetup() {
    }

    public static void apply(LogSettings settings) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return; // another SLF4J provider won: it is configured its own way
        }
        context.reset();
        // JUL loggers get Logback's levels, so that disabled levels cost nothing in JUL either
        LevelChangePropagator propagator = new LevelChangePropagator();
        propagator.setContext(context);
        propagator.setResetJUL(true);
        context.addListener(propagator);
        propagator.start();

        Encoder<ILoggingEvent> encoder;
        if (settings.format() == LogSettings.Format.JSON) {
            JsonEncoder json = new JsonEncoder();
            json.setContext(context);
            // the message with its arguments in place, beside the pattern ("message") log tools group by
            json.setWithFormattedMessage(true);
            json.start();
            encoder = json;
        } else {
            PatternLayoutEncoder text = new PatternLayoutEncoder();
            text.setContext(context);
            text.setPattern(TEXT_PATTERN);
            text.start();
            encoder = text;
        }
        ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
        console.setContext(context);
        console.setName("console");
        console.setEncoder(encoder);
        console.start();
        AsyncAppender async = new AsyncAppender();
        async.setContext(context);
        async.setName("async-console");
        async.setQueueSize(QUEUE_SIZE);
        async.setDiscardingThreshold(0); // Logback drops INFO and below from a queue 80 % full by default: never
        async.setMaxFlushTime(5000);
        async.addAppender(console);
        async.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Level level = Level.toLevel(settings.level(), Level.INFO);
        root.setLevel(level);
        root.addAppender(async);
        if (level.isGreaterOrEqual(Level.INFO)) {
            // Chronicle tells at INFO how long each mapping and sync took, and asks for an e-mail address: its
            // warnings and errors are what an operator needs; log-level=debug brings the rest back
            context.getLogger("net.openhft").setLevel(Level.WARN);
            // Ratis logs every retry while a node is down or an election runs (its client at ERROR); the cluster
            // logs leader changes, member changes and a lost majority once each itself (docs/cluster.md)
            context.getLogger("org.apache.ratis").setLevel(Level.WARN);
            context.getLogger("org.apache.ratis.client.impl.OrderedAsync").setLevel(Level.OFF);
            context.getLogger("org.apache.ratis.grpc.server.GrpcLogAppender").setLevel(Level.ERROR);
            context.getLogger("org.apache.ratis.grpc.server.GrpcServerProtocolService").setLevel(Level.ERROR);
            context.getLogger("org.apache.ratis.grpc.server.GrpcClientProtocolService").setLevel(Level.ERROR);
        }

        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
    }

    /** Writes the queued lines out (within 5 s) and stops logging: the last thing before the process ends. */
    public static void stop() {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            context.stop();
        }
    }
}
