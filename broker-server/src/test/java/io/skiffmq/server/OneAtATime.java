package io.skiffmq.server;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Marks a test class that runs alone, after the others: it starts several brokers, kills them or cuts them off, or
 * fills a heap, and judges timings that a second test JVM on the same 2 cores would skew. The other classes run in
 * two JVMs side by side (broker-server's pom: surefire's executions and their tag filters), among them a single
 * broker killed with kill -9 (CrashRecoveryTest, StreamCrashRecoveryTest) and the console in Chromium, whose waits
 * are generous: alone, they took 67 s of a serial phase that holds the suite near its 15-minute budget.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(OneAtATime.TAG)
@interface OneAtATime {
    String TAG = "one-at-a-time";
}
