package io.skiffmq.server.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Where queues run ({@link EventLoops}) and how work reaches a loop ({@link LoopMailbox}). */
class EventLoopsTest {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final EventLoops loops = new EventLoops(group);
    private final EventLoop first = group.next();
    private final EventLoop second = group.next();

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void aQueueRunsOnTheLoopOfItsFirstUserAndStaysThere() throws Exception {
        QueueExecutor queue = loops.placeQueue();
        QueueExecutor another = loops.placeQueue();
        assertThat(second.submit(queue::inExecutor).get()).as("the first user's loop").isTrue();
        assertThat(second.submit(another::inExecutor).get()).as("not the loops in turn").isTrue();
        assertThat(first.submit(queue::inExecutor).get()).as("a later user elsewhere crosses over").isFalse();
        CompletableFuture<Boolean> ranOnSecond = new CompletableFuture<>();
        first.execute(() -> queue.execute(() -> ranOnSecond.complete(second.inEventLoop())));
        assertThat(ranOnSecond.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void usersRacingToPlaceAQueueAgreeOnOneLoop() throws Exception {
        for (int round = 0; round < 200; round++) {
            QueueExecutor queue = loops.placeQueue();
            CountDownLatch go = new CountDownLatch(1);
            io.netty.util.concurrent.Future<Boolean> onFirst = first.submit(() -> {
                go.await();
                return queue.inExecutor();
            });
            io.netty.util.concurrent.Future<Boolean> onSecond = second.submit(() -> {
                go.await();
                return queue.inExecutor();
            });
            go.countDown();
            assertThat(onFirst.get(10, TimeUnit.SECONDS) ^ onSecond.get(10, TimeUnit.SECONDS))
                .as("exactly one of them owns it").isTrue();
        }
    }

    @Test
    void workBeforeAnyUserRunsOnTheCallerAndLeavesTheQueueUnplaced() throws Exception {
        QueueExecutor queue = loops.placeQueue();
        List<Thread> ran = new ArrayList<>();
        queue.runBeforeUse(() -> ran.add(Thread.currentThread()));
        assertThat(ran).containsExactly(Thread.currentThread());
        assertThat(second.submit(queue::inExecutor).get()).as("placed by its first user, after").isTrue();
    }

    @Test
    void aQueueFirstTouchedOffTheLoopsTakesTheLoopsInTurn() throws Exception {
        QueueExecutor a = loops.placeQueue();
        QueueExecutor b = loops.placeQueue();
        CompletableFuture<EventLoop> ranA = new CompletableFuture<>();
        CompletableFuture<EventLoop> ranB = new CompletableFuture<>();
        a.execute(() -> ranA.complete(first.inEventLoop() ? first : second));
        b.execute(() -> ranB.complete(first.inEventLoop() ? first : second));
        assertThat(ranA.get(10, TimeUnit.SECONDS)).isNotSameAs(ranB.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aMailboxKeepsEachProducersOrderAndOutlivesAFailedTask() throws Exception {
        LoopMailbox mailbox = loops.mailbox(first);
        assertThat(loops.mailbox(first)).isSameAs(mailbox);
        int producers = 4;
        int each = 3 * LoopMailbox.DRAIN_LIMIT;
        int[] last = new int[producers];
        boolean[] inOrder = {true};
        CountDownLatch done = new CountDownLatch(producers * each);
        List<Thread> threads = new ArrayList<>();
        mailbox.execute(() -> {
            throw new IllegalStateException("a failing task (expected in this test's log)");
        });
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Thread thread = new Thread(() -> {
                for (int i = 1; i <= each; i++) {
                    int n = i;
                    mailbox.execute(() -> {
                        inOrder[0] &= first.inEventLoop() && last[producer] == n - 1;
                        last[producer] = n;
                        done.countDown();
                    });
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(first.submit(() -> inOrder[0]).get()).isTrue();
    }

    @Test
    void aProducerThatKeepsUpCannotHoldTheLoopFromItsAfterTurnWork() throws Exception {
        LoopMailbox mailbox = loops.mailbox(first);
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        CompletableFuture<Integer> afterTurnRanAt = new CompletableFuture<>();
        first.execute(() -> {
            mailbox.afterTurn(() -> afterTurnRanAt.complete(runs.get()));
            mailbox.execute(new Runnable() {
                @Override
                public void run() {
                    // hands itself over again at once, as a publisher as fast as the loop does
                    if (runs.incrementAndGet() < 1_000_000 && !afterTurnRanAt.isDone()) {
                        mailbox.execute(this);
                    }
                }
            });
        });
        assertThat(afterTurnRanAt.get(10, TimeUnit.SECONDS)).as("passes before the after-turn work ran")
            .isLessThanOrEqualTo(LoopMailbox.PASSES_PER_TURN);
    }
}
