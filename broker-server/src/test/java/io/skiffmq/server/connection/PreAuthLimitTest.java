package io.skiffmq.server.connection;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link PreAuthLimit}'s count: exact, never past the limit, each connection leaving once. */
class PreAuthLimitTest {

    @Test
    void aConnectionLeavesOnceWhetherOpenedOrClosedFirst() {
        PreAuthLimit limit = new PreAuthLimit(4);
        List<EmbeddedChannel> channels = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            EmbeddedChannel channel = new EmbeddedChannel();
            assertThat(limit.enter(channel)).isTrue();
            channels.add(channel);
        }
        assertThat(limit.enter(new EmbeddedChannel())).as("the fifth").isFalse();
        PreAuthLimit.opened(channels.get(0));
        PreAuthLimit.opened(channels.get(0));
        channels.get(0).close();
        assertThat(limit.count()).as("opened twice, then closed: left once").isEqualTo(3);
        channels.get(1).close();
        PreAuthLimit.opened(channels.get(1));
        assertThat(limit.count()).as("closed, then opened: left once").isEqualTo(2);
        assertThat(limit.refused()).isEqualTo(1);
        assertThat(limit.enter(new EmbeddedChannel())).isTrue();
    }

    @Test
    void noLimitCountsNothing() {
        PreAuthLimit none = new PreAuthLimit(0);
        for (int i = 0; i < 10; i++) {
            assertThat(none.enter(new EmbeddedChannel())).isTrue();
        }
        assertThat(none.count()).isZero();
        assertThat(none.refused()).isZero();
    }

    /** Threads entering and leaving at random: the count never passes the limit, and ends at zero. */
    @Test
    void theCountIsExactUnderConcurrency() throws Exception {
        int threads = 8;
        int rounds = 2000;
        PreAuthLimit limit = new PreAuthLimit(16);
        AtomicInteger admitted = new AtomicInteger();
        AtomicInteger highest = new AtomicInteger();
        CyclicBarrier go = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 17L * t;
            Thread worker = new Thread(() -> {
                Random random = new Random(seed);
                List<EmbeddedChannel> mine = new ArrayList<>();
                try {
                    go.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < rounds; i++) {
                    EmbeddedChannel channel = new EmbeddedChannel();
                    if (limit.enter(channel)) {
                        admitted.incrementAndGet();
                        mine.add(channel);
                        highest.accumulateAndGet(limit.count(), Math::max);
                    }
                    if (!mine.isEmpty() && random.nextBoolean()) {
                        EmbeddedChannel leaving = mine.remove(random.nextInt(mine.size()));
                        if (random.nextBoolean()) {
                            PreAuthLimit.opened(leaving);
                        }
                        leaving.close();
                    }
                }
                mine.forEach(EmbeddedChannel::close);
            });
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(highest.get()).isLessThanOrEqualTo(16);
        assertThat(limit.count()).isZero();
        assertThat(admitted.get() + limit.refused()).isEqualTo((long) threads * rounds);
    }
}
