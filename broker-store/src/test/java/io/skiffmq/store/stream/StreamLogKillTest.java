package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.StreamLogs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.Journal;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer process killed with SIGKILL while it appends: every chunk it saw committed is there after recovery,
 * every chunk on disk has a good CRC, and offsets go on densely.
 */
@ExtendWith(LeakDetection.class)
class StreamLogKillTest {
    @TempDir
    Path dir;

    /** The child: appends chunks of 10 messages for ever, printing each committed offset. */
    public static void main(String[] args) {
        StreamLogConfig config = StreamLogConfig.defaults(Journal.SyncPolicy.OS).withMaxSegmentBytes(200_000);
        try (StreamLog log = StreamLog.open(Path.of(args[0]), config)) {
            log.addListener(offset -> System.out.println(offset));
            while (true) {
                writeChunk(log, 10);
            }
        }
    }

    @Test
    void nothingCommittedIsLostToAKill9() throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-") || arg.startsWith("-Dchronicle")) {
                command.add(arg); // Chronicle's flags
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), StreamLogKillTest.class.getName(),
            dir.toString()));
        Process writer = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        AtomicLong committed = new AtomicLong(-1);
        Thread lines = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(writer.getInputStream(),
                    StandardCharsets.US_ASCII))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (!line.isBlank() && Character.isDigit(line.charAt(0))) {
                        committed.set(Long.parseLong(line.trim()));
                    }
                }
            } catch (Exception e) {
                // the process is gone
            }
        });
        lines.start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> committed.get() >= 50_000);
        } finally {
            writer.destroyForcibly(); // SIGKILL
            writer.waitFor();
            lines.join();
        }
        long confirmed = committed.get();

        assertThat(denseMessages(onDisk(dir), 0)).as("every chunk on disk whole, offsets dense")
            .hasSizeGreaterThan((int) confirmed);
        try (StreamLog log = StreamLog.open(dir, StreamLogConfig.defaults(Journal.SyncPolicy.OS))) {
            long next = log.nextOffset();
            assertThat(next).isGreaterThan(confirmed);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                assertThat(denseMessages(drain(reader), 0))
                    .containsExactlyElementsOf(LongStream.range(0, next).mapToObj(StreamLogs::body).toList());
            }
            assertThat(writeChunk(log, 10)).isEqualTo(next);
        }
    }
}
