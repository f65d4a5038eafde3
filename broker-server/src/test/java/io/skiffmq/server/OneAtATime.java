package io.skiffmq.server;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Marks a test class that runs alone, after the others: it starts several brokers, kills them, cuts them off, fills
 * a heap or drives Chromium, and judges timings that a second test JVM on the same 2 cores would skew. The other
 * classes run in two JVMs side by side (broker-server's pom: surefire's executions and their tag filters).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(OneAtATime.TAG)
@interface OneAtATime {
    String TAG = "one-at-a-time";
}
