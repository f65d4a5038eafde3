package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The appends' timeout: a stop of the process counts as one tick. A stop is played by holding the timer's thread,
 * which then sees the gap that a stopped process would see when it runs again.
 */
class RunningTimeTest {
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final RunningTime running;

    RunningTimeTest() {
        timer.setRemoveOnCancelPolicy(true);
        running = new RunningTime(timer);
    }

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    @Test
    void aFutureNotCompletedInTimeFailsWithATimeout() {
        CompletableFuture<Void> future = running.within(new CompletableFuture<>(), 100);
        await().atMost(Duration.ofSeconds(10)).until(future::isDone);
        assertThat(future).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(TimeoutException.class);
    }

    @Test
    void aStopLongerThanTheTimeoutDoesNotUseItUp() throws Exception {
        CompletableFuture<Void> future = running.within(new CompletableFuture<>(), 400);
        timer.execute(() -> sleep(1_500)); // the process stands still past the deadline
        // read on the timer's thread right after the deadline's check, which is due before it
        boolean doneAfterTheCheck = timer.schedule(future::isDone, 500, TimeUnit.MILLISECONDS).get();
        assertThat(doneAfterTheCheck).as("a deadline of 400 ms after a stop of 1.5 s, counted as a tick").isFalse();
        await().atMost(Duration.ofSeconds(10)).until(future::isDone);
        assertThat(future).isCompletedExceptionally();
    }

    @Test
    void aFutureCompletedInTimeIsLeftAsItIsAndItsCheckGoes() {
        CompletableFuture<String> future = running.within(new CompletableFuture<>(), 60_000);
        assertThat(timer.getQueue()).hasSize(2); // the tick and the deadline's check
        future.complete("committed");
        assertThat(timer.getQueue()).hasSize(1);
        assertThat(future).isCompletedWithValue("committed");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
