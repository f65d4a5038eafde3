package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.PagedMessage;
import io.skiffmq.core.queue.QueueLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Page files on disk: written through a buffer by the store's writer thread, read back in order across segments
 * (from memory while not written yet), rewritten, dropped.
 */
@ExtendWith(LeakDetection.class)
class SegmentPageFileTest {
    @TempDir
    Path dir;
    private final ExecutorService writer = Executors.newSingleThreadExecutor();
    private final AtomicLong unwritten = new AtomicLong();

    @AfterEach
    void stopWriter() {
        writer.shutdownNow();
    }

    private SegmentPageFile file(long segmentBytes) {
        return new SegmentPageFile(dir, segmentBytes, writer, unwritten, Long.MAX_VALUE);
    }

    /** A message with a body of {@code size} bytes of {@code fill}. */
    private static Message large(int size, byte fill) {
        ByteBuf bytes = Unpooled.buffer().writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xb0}).writeInt(size);
        for (int i = 0; i < size; i++) {
            bytes.writeByte(fill);
        }
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void appendLarge(SegmentPageFile file, int i, int size) {
        Message m = large(size, (byte) ('a' + i));
        file.append(i, m, 0, false, -1, Long.MAX_VALUE, size);
        m.release();
    }

    private static void checkLarge(PagedMessage paged, int i, int size) {
        assertThat(paged.sequence()).isEqualTo(i);
        byte[] all = ByteBufUtil.getBytes(paged.message().toAmqp10().bytes());
        assertThat(all).hasSize(size + 8);
        for (int b = 8; b < all.length; b++) {
            if (all[b] != (byte) ('a' + i)) {
                throw new AssertionError("message " + i + " byte " + b + " is " + all[b]);
            }
        }
        paged.message().release();
    }

    @Test
    void theCallerNeverWritesAndReadsWhatIsNotWrittenYetFromMemory() throws Exception {
        // issue 30: a 16 MiB message written on the queue's event loop held every connection on it while the
        // kernel throttled the write; the writer thread takes the writes, and what it has not written is read back
        // from memory (never written at all when reading passed it first)
        List<Runnable> held = new ArrayList<>();
        SegmentPageFile file = new SegmentPageFile(dir, 1 << 20, held::add, unwritten, Long.MAX_VALUE);
        int size = 200_000;
        for (int i = 0; i < 3; i++) {
            appendLarge(file, i, size);
        }
        Path segment = dir.resolve("page-000001");
        assertThat(Files.size(segment)).as("nothing written by the caller").isZero();
        assertThat(held).as("handed to the writer").hasSize(3);
        assertThat(unwritten.get()).isGreaterThan(3L * size);
        checkLarge(file.read(), 0, size); // from memory
        held.forEach(Runnable::run);
        assertThat(unwritten.get()).isZero();
        byte[] start = new byte[16];
        try (var channel = java.nio.channels.FileChannel.open(segment)) {
            channel.read(java.nio.ByteBuffer.wrap(start), 0);
        }
        assertThat(start).as("read before it was written: never written").containsOnly(0);
        checkLarge(file.read(), 1, size); // from the file
        checkLarge(file.read(), 2, size);
        assertThat(file.read()).isNull();
        file.delete();
    }

    @Test
    void pastTheUnwrittenLimitAnAppendWaitsForTheWriter() throws Exception {
        CountDownLatch diskBusy = new CountDownLatch(1);
        writer.execute(() -> {
            try {
                diskBusy.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        SegmentPageFile file = new SegmentPageFile(dir, 1 << 20, writer, unwritten, 100_000);
        Thread appender = new Thread(() -> appendLarge(file, 0, 200_000));
        appender.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (appender.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(appender.getState()).as("waiting for the writer").isEqualTo(Thread.State.WAITING);
        diskBusy.countDown();
        appender.join();
        assertThat(unwritten.get()).isZero();
        checkLarge(file.read(), 0, 200_000);
        file.delete();
    }

    private static Message message(String text, boolean durable) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        ByteBuf bytes = Unpooled.buffer();
        if (!durable) {
            bytes.writeBytes(new byte[] {0x00, 0x53, 0x70, 0x45}); // a header: durable false
        }
        bytes.writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) utf8.length}).writeBytes(utf8);
        try {
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "ex", "key");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static String body(Message message) {
        String s = new String(ByteBufUtil.getBytes(message.toAmqp10().bytes()), StandardCharsets.ISO_8859_1);
        return s.substring(s.lastIndexOf((char) 0xa0) + 2);
    }

    private List<String> files() throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static void append(SegmentPageFile file, int i) {
        Message m = message("message " + i + " " + "x".repeat(i % 50), i % 3 != 0);
        file.append(i, m, i % 4, i % 5 == 0, i % 2 == 0 ? 1000 + i : -1, i % 7 == 0 ? Long.MAX_VALUE : i * 10L, i);
        m.release();
    }

    private static void check(PagedMessage paged, int i) {
        assertThat(paged).as("message %d", i).isNotNull();
        assertThat(paged.sequence()).isEqualTo(i);
        assertThat(body(paged.message())).isEqualTo("message " + i + " " + "x".repeat(i % 50));
        assertThat(paged.message().durable()).isEqualTo(i % 3 != 0);
        assertThat(paged.message().exchange()).isEqualTo("ex");
        assertThat(paged.message().routingKey()).isEqualTo("key");
        assertThat(paged.deliveryCount()).isEqualTo(i % 4);
        assertThat(paged.acquiredBefore()).isEqualTo(i % 5 == 0);
        assertThat(paged.location()).isEqualTo(i % 2 == 0 ? 1000 + i : -1);
        assertThat(paged.expiresAt()).isEqualTo(i % 7 == 0 ? Long.MAX_VALUE : i * 10L);
        assertThat(paged.bodySize()).isEqualTo(i);
        paged.message().release();
    }

    @Test
    void messagesComeBackInOrderAcrossSegmentsWhichGoOnceRead() throws Exception {
        SegmentPageFile file = file(4096);
        for (int i = 0; i < 2000; i++) {
            append(file, i);
        }
        int segments = files().size();
        assertThat(segments).as("written past the buffer, in segments of 4 KiB").isGreaterThan(20);
        for (int i = 0; i < 1000; i++) {
            check(file.read(), i);
        }
        assertThat(files().size()).as("segments read through are deleted").isLessThan(segments * 3 / 4);
        for (int i = 2000; i < 2100; i++) {
            append(file, i); // interleaved: reading catches up with bytes still in the write buffer
            check(file.read(), i - 1000);
        }
        for (int i = 1100; i < 2100; i++) {
            check(file.read(), i);
        }
        assertThat(file.read()).isNull();
        append(file, 7);
        check(file.read(), 7);
        assertThat(file.read()).isNull();
        file.delete();
        assertThat(Files.exists(dir)).isFalse();
    }

    @Test
    void relocationRewritesLocationsInPlaceAndClearReportsTheLoggedOnes() throws Exception {
        SegmentPageFile file = file(8192);
        for (int i = 0; i < 300; i++) {
            append(file, i);
        }
        check(file.read(), 0);
        List<Long> copied = new ArrayList<>();
        QueueLog log = new QueueLog() {
            @Override
            public long publish(long sequence, Message message, long deliveryCount, long expiresAt,
                    Runnable durable) {
                throw new AssertionError();
            }

            @Override
            public long relocate(long sequence, Message message, long deliveryCount, long expiresAt,
                    long location) {
                assertThat(body(message)).startsWith("message " + sequence + " ");
                copied.add(sequence);
                return 5000 + sequence;
            }

            @Override
            public void requeue(long sequence, long location, long deliveryCount) {
            }

            @Override
            public boolean isWritten(long location) {
                return true;
            }

            @Override
            public Message read(long sequence, long location) {
                throw new AssertionError();
            }

            @Override
            public void whenWritten(Runnable action) {
            }

            @Override
            public void remove(long sequence, long location) {
            }

            @Override
            public void deleted() {
            }

            @Override
            public void stopped(long[] deliveredBefore, int count) {
            }
        };
        // logged ones are the even ones, at 1000 + i: those before 1100 are i = 2, 4, …, 98
        assertThat(file.relocate(1100, log)).isEqualTo(49);
        assertThat(copied).first().isEqualTo(2L);
        for (int i = 1; i < 150; i++) {
            PagedMessage paged = file.read();
            assertThat(paged.location()).isEqualTo(i % 2 != 0 ? -1 : i < 100 ? 5000 + i : 1000 + i);
            paged.message().release();
        }
        List<long[]> removed = new ArrayList<>();
        file.clear((sequence, location) -> removed.add(new long[] {sequence, location}));
        assertThat(removed).hasSize(75);
        assertThat(removed.get(0)).containsExactly(150, 1150);
        assertThat(files()).isEmpty();
        assertThat(file.read()).isNull();
        append(file, 1);
        check(file.read(), 1);
        file.delete();
    }
}
