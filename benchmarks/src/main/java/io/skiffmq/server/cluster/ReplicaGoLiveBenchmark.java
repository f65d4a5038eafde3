package io.skiffmq.server.cluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.cluster.QueueGroup;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a quorum queue's failover costs the new leader before it serves the queue (issue 28): building its live queue
 * from its replica of {@code messages} messages (0-9-1, 12 B bodies, as {@code benchmarks/replica-restart} fills),
 * as {@code ReplicatedQueues.goLive} does: the replica's messages read out, then restored into a classic queue.
 * One shot per iteration; {@code -prof gc} gives the bytes per go-live.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g"})
@Warmup(iterations = 2)
@Measurement(iterations = 5)
public class ReplicaGoLiveBenchmark {
    private static final QueueCommands.Key QUEUE = new QueueCommands.Key("/", "qq", 1);
    /** Where the sequence sits in an enqueue command of {@link #QUEUE}: kind, vhost, name, incarnation. */
    private static final int SEQUENCE_AT = 1 + 4 + 1 + 4 + 2 + 8;

    @Param("1000000")
    public int messages;

    private QueueReplica replica;

    /** A group that commits at once: a go-live appends nothing, a closed live queue nothing either. */
    private static final QueueGroup GROUP = new QueueGroup() {
        @Override
        public String name() {
            return "g";
        }

        @Override
        public List<String> members() {
            return List.of("a");
        }

        @Override
        public String leader() {
            return "a";
        }

        @Override
        public CompletableFuture<Void> append(long epoch, byte[] command) {
            return CompletableFuture.completedFuture(null);
        }
    };

    @Setup(Level.Trial)
    public void fill() throws Exception {
        ByteBuf properties = Unpooled.buffer();
        BasicProperties.EMPTY.encode(properties);
        Message message = Amqp091Message.of(properties, Unpooled.wrappedBuffer(new byte[12]), "", "qq");
        byte[] template = QueueCommands.enqueue(QUEUE, 0, 0, 0, Long.MAX_VALUE, message);
        message.release();
        ByteBuffer command = ByteBuffer.wrap(template);
        replica = new QueueReplica();
        for (long sequence = 0; sequence < messages; sequence++) {
            command.putLong(SEQUENCE_AT, sequence).position(0);
            byte kind = command.get();
            QueueCommands.key(command);
            replica.apply(kind, command);
        }
    }

    @Benchmark
    public long goLive() {
        ClassicQueue live = keepLive();
        long ready = live.readyCount();
        live.close();
        return ready;
    }

    /** A live queue built as {@link #goLive} builds it, left open: the heap it keeps can be measured. */
    public ClassicQueue keepLive() {
        return liveQueue(QUEUE, replica);
    }

    /** The live queue of {@code key} a new leader builds from {@code replica} (as {@code ReplicatedQueues.goLive}). */
    static ClassicQueue liveQueue(QueueCommands.Key key, QueueReplica replica) {
        ClassicQueue live = new ClassicQueue(QueueDeclaration.of(key.name(), true,
            Map.of("x-queue-type", "quorum")), QueueExecutor.CALLER_THREAD, new ReplicatedQueueLog(GROUP, key, 1,
                QueueExecutor.CALLER_THREAD, replica.enqueuers(), null, null, replica), Long.MAX_VALUE,
            QueueContext.DEFAULT);
        QueueReplica.restore(live, replica.held());
        live.recovered();
        return live;
    }
}
