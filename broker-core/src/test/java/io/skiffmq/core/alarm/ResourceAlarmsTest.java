package io.skiffmq.core.alarm;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ResourceAlarmsTest {

    @Test
    void onlyChangesReachTheListenersAndUnsubscribingStopsThem() {
        ResourceAlarms alarms = new ResourceAlarms();
        List<Set<Resource>> seen = new ArrayList<>();
        Runnable unsubscribe = alarms.onChange(seen::add);
        assertThat(alarms.raise(Resource.MEMORY)).isTrue();
        assertThat(alarms.raise(Resource.MEMORY)).as("up already").isFalse();
        assertThat(alarms.clear(Resource.DISK)).as("was not up").isFalse();
        assertThat(alarms.raise(Resource.DISK)).isTrue();
        unsubscribe.run();
        assertThat(alarms.clear(Resource.MEMORY)).isTrue();
        assertThat(seen).containsExactly(Set.of(Resource.MEMORY), Set.of(Resource.MEMORY, Resource.DISK));
        assertThat(alarms.active()).containsExactly(Resource.DISK);
    }

    @Test
    void theSnapshotHandedOutNeverChanges() {
        ResourceAlarms alarms = new ResourceAlarms();
        Set<Resource> before = alarms.active();
        alarms.raise(Resource.DISK);
        assertThat(before).isEmpty();
        assertThat(alarms.active()).containsExactly(Resource.DISK);
    }

    @Test
    void manyThreadsRaisingAndClearingLeaveTheStateTheLastChangeOfEachMade() throws Exception {
        ResourceAlarms alarms = new ResourceAlarms();
        AtomicInteger calls = new AtomicInteger();
        alarms.onChange(active -> calls.incrementAndGet());
        int threads = 4;
        int rounds = 10_000;
        AtomicInteger changes = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Resource resource = t % 2 == 0 ? Resource.MEMORY : Resource.DISK;
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < rounds; i++) {
                    if (alarms.raise(resource)) {
                        changes.incrementAndGet();
                    }
                    if (alarms.clear(resource)) {
                        changes.incrementAndGet();
                    }
                }
            });
            worker.start();
            workers.add(worker);
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(alarms.active()).as("every thread cleared last").isEmpty();
        assertThat(calls.get()).as("one listener call per change that happened").isEqualTo(changes.get());
        assertThat(changes.get() % 2).as("as many rises as clears").isZero();
    }

    @Test
    void theBlockedReasonUsesRabbitMqsWords() {
        assertThat(ResourceAlarms.blockedReason(Set.of(Resource.MEMORY))).isEqualTo("low on memory");
        assertThat(ResourceAlarms.blockedReason(Set.of(Resource.DISK))).isEqualTo("low on disk");
    }
}
