package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.ByteCapacity;
import com.rabbitmq.stream.ConfirmationStatus;
import com.rabbitmq.stream.Consumer;
import com.rabbitmq.stream.ConsumerBuilder;
import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.metrics.MetricsCollector;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * What a consumer reads over the stream protocol, measured in the client: a filtering consumer gets the chunks its
 * values may be in and skips the others (the bytes it reads, against an unfiltered consumer's); retention by size
 * moves the first offset a consumer from the first sees.
 */
class StreamProtocolFilterTest extends StreamProtocolTestBase {
    private static final int VALUES = 10;
    private static final int PER_VALUE = 200;


    /** Counts what one environment's connections read: bytes of frames, and chunks. */
    private static final class Reads implements MetricsCollector {
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong chunks = new AtomicLong();

        @Override
        public void openConnection() {
        }

        @Override
        public void closeConnection() {
        }

        @Override
        public void publish(int count) {
        }

        @Override
        public void publishConfirm(int count) {
        }

        @Override
        public void publishError(int count) {
        }

        @Override
        public void chunk(int entriesCount) {
            chunks.incrementAndGet();
        }

        @Override
        public void consume(long count) {
        }

        @Override
        public void writtenBytes(int writtenBytes) {
        }

        @Override
        public void readBytes(int readBytes) {
            bytes.addAndGet(readBytes);
        }
    }

    /**
     * Reads the stream from the first with its own environment, until {@code count} messages passed; returns what
     * that environment read.
     */
    private static Reads read(String stream, int count, UnaryOperator<ConsumerBuilder> filter,
            List<String> received) {
        Reads reads = new Reads();
        try (Environment own = StreamClients.builder(broker.streamPort()).metricsCollector(reads).build();
                Consumer consumer = filter.apply(own.consumerBuilder().stream(stream)
                    .offset(OffsetSpecification.first())
                    .messageHandler((context, message) -> received.add(StreamClients.text(message)))).build()) {
            Amqp091Support.await().atMost(TIMEOUT).until(() -> received.size() >= count);
        }
        return reads;
    }

    @Test
    void aFilteringConsumerReadsOnlyTheChunksItsValueMayBeIn() throws Exception {
        environment.streamCreator().stream("filtered").create();
        try (Producer producer = environment.producerBuilder().stream("filtered")
                .filterValue(message -> (String) message.getApplicationProperties().get("region")).build()) {
            // a value at a time, each confirmed before the next: each chunk holds one value
            for (int value = 0; value < VALUES; value++) {
                CountDownLatch confirmed = new CountDownLatch(PER_VALUE);
                List<ConfirmationStatus> failed = Collections.synchronizedList(new ArrayList<>());
                for (int i = 0; i < PER_VALUE; i++) {
                    producer.send(producer.messageBuilder().applicationProperties().entry("region", "r" + value)
                        .messageBuilder().addData(StreamClients.bytes("r" + value + "-" + i + "-" + "x".repeat(100)))
                        .build(), status -> {
                            if (!status.isConfirmed()) {
                                failed.add(status);
                            }
                            confirmed.countDown();
                        });
                }
                assertThat(confirmed.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                assertThat(failed).isEmpty();
            }
        }
        List<String> all = Collections.synchronizedList(new ArrayList<>());
        Reads unfiltered = read("filtered", VALUES * PER_VALUE, c -> c, all);
        List<String> r3 = Collections.synchronizedList(new ArrayList<>());
        Reads filtered = read("filtered", PER_VALUE, c -> c.filter().values("r3")
            .postFilter(m -> "r3".equals(m.getApplicationProperties().get("region"))).builder(), r3);
        assertThat(r3).hasSize(PER_VALUE).allMatch(body -> body.startsWith("r3-"));
        double share = (double) filtered.bytes.get() / unfiltered.bytes.get();
        System.out.printf("filtered consumer: %d bytes in %d chunks; unfiltered: %d bytes in %d chunks (%.1f%%)%n",
            filtered.bytes.get(), filtered.chunks.get(), unfiltered.bytes.get(), unfiltered.chunks.get(),
            share * 100);
        assertThat(filtered.chunks.get()).isLessThan(unfiltered.chunks.get());
        assertThat(share).as("share of the bytes a filtering consumer reads").isLessThan(0.25);
        environment.deleteStream("filtered");
    }

    @Test
    void retentionBySizeMovesTheFirstOffsetAConsumerSees() throws Exception {
        environment.streamCreator().stream("retained").maxLengthBytes(ByteCapacity.B(400_000))
            .maxSegmentSizeBytes(ByteCapacity.B(100_000)).create();
        try (Producer producer = environment.producerBuilder().stream("retained").build()) {
            for (int batch = 0; batch < 20; batch++) {
                assertThat(StreamClients.sendAndConfirm(producer, "b" + batch + "-" + "y".repeat(1000) + "-", 100))
                    .isEmpty();
            }
        }
        long first = environment.queryStreamStats("retained").firstOffset();
        assertThat(first).as("retention deleted the oldest segments").isGreaterThan(0);
        List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
        try (Consumer consumer = environment.consumerBuilder().stream("retained").offset(OffsetSpecification.first())
                .messageHandler((context, message) -> offsets.add(context.offset())).build()) {
            Amqp091Support.await().atMost(TIMEOUT).until(() -> offsets.contains(1999L));
        }
        assertThat(offsets.get(0)).isEqualTo(first);
        environment.deleteStream("retained");
    }
}
