package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static io.skiffmq.server.StreamClients.sendAndConfirm;
import static io.skiffmq.server.StreamClients.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.stream.ByteCapacity;
import com.rabbitmq.stream.ChunkChecksum;
import com.rabbitmq.stream.Consumer;
import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * RabbitMQ's stream Java client against the stream protocol: a producer with confirms, and consumers from each
 * offset specification reading what it wrote, offsets and bodies; offsets dense across segment rolls, every chunk's
 * CRC checked by the client.
 */
class StreamProtocolTest extends StreamProtocolTestBase {

    /** A consumer's messages as "offset:body", in the order received. */
    private static final class Received {
        final List<String> messages = Collections.synchronizedList(new ArrayList<>());

        Consumer subscribe(String stream, OffsetSpecification offset) {
            return environment.consumerBuilder().stream(stream).offset(offset)
                .messageHandler((context, message) -> messages.add(context.offset() + ":" + text(message)))
                .build();
        }

        List<String> await(int count) {
            org.awaitility.Awaitility.await().atMost(TIMEOUT).until(() -> messages.size() >= count);
            synchronized (messages) {
                return List.copyOf(messages);
            }
        }
    }

    private static List<String> expected(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> i + ":m" + i).toList();
    }

    @Test
    void aProducerIsConfirmedAndAConsumerFromTheFirstReadsEveryMessageAtItsOffset() throws Exception {
        environment.streamCreator().stream("first").create();
        try (Producer producer = environment.producerBuilder().stream("first").build()) {
            assertThat(sendAndConfirm(producer, "m", 1000)).isEmpty();
        }
        Received received = new Received();
        try (Consumer consumer = received.subscribe("first", OffsetSpecification.first())) {
            assertThat(received.await(1000)).isEqualTo(expected(0, 1000));
        }
        environment.deleteStream("first");
    }

    @Test
    void largeChunksGoFromTheirFileAsTheyAreStored() throws Exception {
        environment.streamCreator().stream("large").create();
        String big = "L".repeat(150_000);
        try (Producer producer = environment.producerBuilder().stream("large").build()) {
            assertThat(sendAndConfirm(producer, big, 12)).isEmpty();
        }
        Received received = new Received();
        try (Consumer consumer = received.subscribe("large", OffsetSpecification.first())) {
            assertThat(received.await(12)).isEqualTo(IntStream.range(0, 12).mapToObj(i -> i + ":" + big + i)
                .toList());
        }
        environment.deleteStream("large");
    }

    @Test
    void offsetsStayDenseAcrossSegmentRollsAndTheClientFindsEveryChunksCrcGood() throws Exception {
        environment.streamCreator().stream("rolled").maxSegmentSizeBytes(ByteCapacity.B(100_000)).create();
        try (Producer producer = environment.producerBuilder().stream("rolled").build()) {
            for (int batch = 0; batch < 6; batch++) {
                assertThat(sendAndConfirm(producer, "r" + batch + "-" + "z".repeat(1000) + "-", 100)).isEmpty();
            }
        }
        assertThat(((io.skiffmq.core.stream.StreamQueue) broker.vhost("/").queue("rolled")).store().segmentCount())
            .as("at least two rolls").isGreaterThanOrEqualTo(3);
        // the client's check (CRC-32 of each chunk's data against its header), counted
        AtomicLong checked = new AtomicLong();
        AtomicLong bad = new AtomicLong();
        ChunkChecksum crc = (buffer, length, expected) -> {
            CRC32 computed = new CRC32();
            computed.update(buffer.nioBuffer(buffer.readerIndex(), (int) length));
            checked.incrementAndGet();
            if (computed.getValue() != expected) {
                bad.incrementAndGet();
            }
        };
        List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
        try (Environment own = StreamClients.builder(broker.streamPort()).chunkChecksum(crc).build();
                Consumer consumer = own.consumerBuilder().stream("rolled").offset(OffsetSpecification.first())
                    .messageHandler((context, message) -> offsets.add(context.offset())).build()) {
            org.awaitility.Awaitility.await().atMost(TIMEOUT).until(() -> offsets.size() >= 600);
        }
        assertThat(offsets).isEqualTo(LongStream.range(0, 600).boxed().toList());
        assertThat(checked.get()).as("chunks checked").isPositive();
        assertThat(bad.get()).as("chunks with a bad CRC").isZero();
        environment.deleteStream("rolled");
    }

    @Test
    void consumersStartWhereTheirOffsetSpecificationSays() throws Exception {
        environment.streamCreator().stream("specs").create();
        long before;
        try (Producer producer = environment.producerBuilder().stream("specs").build()) {
            assertThat(sendAndConfirm(producer, "m", 100)).isEmpty();
            before = System.currentTimeMillis();
            await().until(() -> System.currentTimeMillis() > before); // later chunks have later timestamps
        }
        Received fromOffset = new Received();
        Received fromLast = new Received();
        Received fromNext = new Received();
        Received fromTimestamp = new Received();
        try (Consumer a = fromOffset.subscribe("specs", OffsetSpecification.offset(42));
                Consumer b = fromLast.subscribe("specs", OffsetSpecification.last());
                Consumer c = fromNext.subscribe("specs", OffsetSpecification.next());
                Consumer d = fromTimestamp.subscribe("specs", OffsetSpecification.timestamp(before + 1))) {
            assertThat(fromOffset.await(58)).isEqualTo(expected(42, 100));
            // the start of the last chunk: whatever it holds, it ends with the last message
            List<String> last = fromLast.await(1);
            assertThat(last).last().isEqualTo("99:m99");
            try (Producer producer = environment.producerBuilder().stream("specs").build()) {
                for (int i = 100; i < 110; i++) {
                    producer.send(producer.messageBuilder().addData(StreamClients.bytes("m" + i)).build(), s -> { });
                }
                assertThat(fromNext.await(10)).isEqualTo(expected(100, 110));
                assertThat(fromTimestamp.await(10)).isEqualTo(expected(100, 110));
                assertThat(fromOffset.await(68)).isEqualTo(expected(42, 110));
            }
        }
        environment.deleteStream("specs");
    }
}
