package io.skiffmq.codec.stream;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.Message;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.codec.QpidProtonCodec;
import com.rabbitmq.stream.compression.Compression;
import com.rabbitmq.stream.impl.Client;
import com.rabbitmq.stream.impl.MessageBatch;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.DefaultFileRegion;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.stream.ConnectionCommand.CommandVersion;
import io.skiffmq.codec.stream.ManagementCommand.Broker;
import io.skiffmq.codec.stream.ManagementCommand.StreamMetadata;
import java.lang.reflect.Method;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The RabbitMQ Stream Java client ({@code com.rabbitmq:stream-client}) against this codec over a socket
 * ({@link StreamTestPeer}): every command the client sends is decoded here into what it meant, and every frame we
 * encode is read by the client's own decoder, which reports what it understood through its listeners and return
 * values. Both directions of every command of PROTOCOL.adoc the client speaks.
 */
class JavaClientInteropTest {
    private static final QpidProtonCodec AMQP = new QpidProtonCodec();

    private StreamTestPeer peer;
    private Client client;
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    @BeforeEach
    void connect() throws Exception {
        peer = new StreamTestPeer();
    }

    @AfterEach
    void close() {
        if (client != null) {
            client.close();
        }
        peer.close();
    }

    private Client client() {
        client = new Client(new Client.ClientParameters().host("localhost").port(peer.port())
            .publishConfirmListener((publisher, id) -> events.add("confirm " + publisher + " " + id))
            .publishErrorListener((publisher, id, code) -> events.add("error " + publisher + " " + id + " " + code))
            .chunkListener((c, subscription, offset, messages, size) -> {
                events.add("chunk " + subscription + " " + offset + " " + messages + " " + size);
                return null;
            })
            .messageListener((subscription, offset, timestamp, committed, context, message) -> events.add(
                "message " + subscription + " " + offset + " " + committed + " "
                    + new String(message.getBodyAsBinary(), StandardCharsets.UTF_8)))
            .creditNotification((subscription, code) -> events.add("credit " + subscription + " " + code))
            .metadataListener((stream, code) -> events.add("metadata " + stream + " " + code))
            .compressionCodecFactory(new com.rabbitmq.stream.compression.PortableCompressionCodecFactory())
            .consumerUpdateListener((c, subscription, active) -> {
                events.add("consumer update " + subscription + " " + active);
                return OffsetSpecification.offset(7);
            }));
        return client;
    }

    private String event() throws InterruptedException {
        String e = events.poll(10, TimeUnit.SECONDS);
        assertThat(e).as("the client reported something within 10 s").isNotNull();
        return e;
    }

    private void handshake() throws InterruptedException {
        peer.next(ConnectionCommand.PeerProperties.class);
        peer.next(ConnectionCommand.SaslHandshake.class);
        peer.next(ConnectionCommand.SaslAuthenticate.class);
        peer.next(ConnectionCommand.Tune.class);
        peer.next(ConnectionCommand.Open.class);
        peer.next(ConnectionCommand.ExchangeCommandVersions.class);
    }

    private static Message message(String body) {
        return AMQP.messageBuilder().addData(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    @Test
    void theHandshakeAsTheClientDrivesIt() throws Exception {
        client();
        ConnectionCommand.PeerProperties properties = peer.next(ConnectionCommand.PeerProperties.class);
        assertThat(properties.properties()).containsEntry("product", "RabbitMQ Stream").containsKey("version")
            .containsEntry("platform", "Java");
        assertThat(peer.next(ConnectionCommand.SaslHandshake.class)).isNotNull();
        ConnectionCommand.SaslAuthenticate authenticate = peer.next(ConnectionCommand.SaslAuthenticate.class);
        assertThat(authenticate.mechanism()).isEqualTo("PLAIN");
        assertThat(authenticate.response()).isEqualTo(Bytes.wrap("\0guest\0guest".getBytes(StandardCharsets.UTF_8)));
        // the client read our tune and answers it under the response key, no correlation id
        assertThat(peer.next(ConnectionCommand.Tune.class))
            .isEqualTo(new ConnectionCommand.Tune(StreamFrameDecoder.DEFAULT_FRAME_MAX, 60, true));
        assertThat(peer.next(ConnectionCommand.Open.class).virtualHost()).isEqualTo("/");
        // it read our peer properties' version as 3.11 or later, so it exchanges command versions
        ConnectionCommand.ExchangeCommandVersions versions = peer.next(ConnectionCommand.ExchangeCommandVersions.class);
        assertThat(versions.versions()).contains(new CommandVersion(CommandKey.DELIVER.key(), 1, 2));
        assertThat(client.brokerVersion()).isEqualTo("4.1.0");
        // and read our versions: publish up to v2 is what turns filtering on
        assertThat(client.filteringSupported()).isTrue();
    }

    @Test
    void publishersConfirmsAndErrors() throws Exception {
        client();
        handshake();
        assertThat(client.declarePublisher((byte) 3, "producer-1", "orders").isOk()).isTrue();
        assertThat(peer.next(PublisherCommand.DeclarePublisher.class).reference()).isEqualTo("producer-1");

        List<Long> ids = client.publish((byte) 3, List.of(message("a"), message("bb"), message("ccc")));
        StreamTestPeer.Publish publish = peer.next(StreamTestPeer.Publish.class);
        assertThat(publish.version()).isEqualTo(1);
        assertThat(publish.publisherId()).isEqualTo(3);
        assertThat(publish.entries()).extracting(StreamTestPeer.Entry::publishingId).isEqualTo(ids);
        // the message bytes are the client's AMQP 1.0 encoding, untouched
        assertThat(publish.entries()).extracting(e -> new String(
            AMQP.decode(Unpooled.wrappedBuffer(e.data()), e.data().length).getBodyAsBinary(), StandardCharsets.UTF_8))
            .containsExactly("a", "bb", "ccc");

        peer.send(0, out -> {
            int start = PublishFrameWriter.beginConfirm(out, 3);
            PublishFrameWriter.addConfirm(out, ids.get(0));
            PublishFrameWriter.addConfirm(out, ids.get(1));
            PublishFrameWriter.endConfirm(out, start);
        });
        assertThat(event()).isEqualTo("confirm 3 " + ids.get(0));
        assertThat(event()).isEqualTo("confirm 3 " + ids.get(1));
        peer.send(0, out -> {
            int start = PublishFrameWriter.beginError(out, 3);
            PublishFrameWriter.addError(out, ids.get(2), ResponseCode.STREAM_NOT_AVAILABLE);
            PublishFrameWriter.endError(out, start);
        });
        assertThat(event()).isEqualTo("error 3 " + ids.get(2) + " 6");

        client.publishBatches((byte) 3, List.of(new MessageBatch(Compression.NONE, List.of(message("x"), message("y"))),
            new MessageBatch(Compression.GZIP, List.of(message("z")))));
        List<StreamTestPeer.Entry> batches = peer.next(StreamTestPeer.Publish.class).entries();
        assertThat(batches).extracting(StreamTestPeer.Entry::batch, StreamTestPeer.Entry::records,
            StreamTestPeer.Entry::compression).containsExactly(
                org.assertj.core.groups.Tuple.tuple(true, 2, 0), org.assertj.core.groups.Tuple.tuple(true, 1, 1));

        peer.answer(CommandKey.QUERY_PUBLISHER_SEQUENCE, q -> new PublisherCommand.QueryPublisherSequenceResponse(
            ((Correlated) q).correlationId(), ResponseCode.OK, 42));
        assertThat(client.queryPublisherSequence("producer-1", "orders")).isEqualTo(42);
        assertThat(peer.next(PublisherCommand.QueryPublisherSequence.class))
            .extracting(PublisherCommand.QueryPublisherSequence::reference).isEqualTo("producer-1");

        peer.answer(CommandKey.DELETE_PUBLISHER, d -> new Response(CommandKey.DELETE_PUBLISHER,
            ((Correlated) d).correlationId(), ResponseCode.PUBLISHER_DOES_NOT_EXIST));
        assertThat(client.deletePublisher((byte) 3).getResponseCode()).isEqualTo((short) 0x12);
        assertThat(peer.next(PublisherCommand.DeletePublisher.class).publisherId()).isEqualTo(3);
    }

    @Test
    void subscriptionsDeliveriesCreditAndOffsets() throws Exception {
        client();
        handshake();
        client.subscribe((byte) 0, "orders", OffsetSpecification.first(), 10);
        client.subscribe((byte) 1, "orders", OffsetSpecification.last(), 1);
        client.subscribe((byte) 2, "orders", OffsetSpecification.next(), 2, Map.of("filter.0", "eu",
            "match-unfiltered", "true"));
        client.subscribe((byte) 3, "orders", OffsetSpecification.offset(100), 3, Map.of(
            "single-active-consumer", "true", "name", "app-1"));
        client.subscribe((byte) 4, "orders", OffsetSpecification.timestamp(1_700_000_000_000L), 4);
        List<ConsumerCommand.Subscribe> subscribes = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            subscribes.add(peer.next(ConsumerCommand.Subscribe.class));
        }
        assertThat(subscribes).usingRecursiveFieldByFieldElementComparatorIgnoringFields("correlationId")
            .containsExactly(
                new ConsumerCommand.Subscribe(0, 0, "orders", OffsetSpec.FIRST, 10, Map.of()),
                new ConsumerCommand.Subscribe(0, 1, "orders", OffsetSpec.LAST, 1, Map.of()),
                new ConsumerCommand.Subscribe(0, 2, "orders", OffsetSpec.NEXT, 2, Map.of("filter.0", "eu",
                    "match-unfiltered", "true")),
                new ConsumerCommand.Subscribe(0, 3, "orders", OffsetSpec.offset(100), 3,
                    Map.of("single-active-consumer", "true", "name", "app-1")),
                new ConsumerCommand.Subscribe(0, 4, "orders", OffsetSpec.timestamp(1_700_000_000_000L), 4, Map.of()));

        // a v2 deliver: our header, then a chunk of the client's own AMQP encodings with a valid CRC
        ByteBuf chunk = amqpChunk(98, "m98", "m99", "m100", "m101");
        peer.send(0, out -> {
            StreamFrameWriter.writeDeliverHeader(out, 3, 90, chunk.readableBytes());
            out.writeBytes(chunk);
        });
        assertThat(event()).startsWith("chunk 3 98 4 ");
        // the client skips the records below the offset it subscribed at
        assertThat(event()).isEqualTo("message 3 100 90 m100");
        assertThat(event()).isEqualTo("message 3 101 90 m101");

        // a v1 deliver as a server sends a stored chunk: the header in a buffer, the chunk from its file, not copied
        ByteBuf stored = amqpChunk(200, "from a file");
        Path segment = Files.createTempFile("chunk", ".segment");
        try {
            Files.write(segment, ByteBufUtil.getBytes(stored));
            ByteBuf header = Unpooled.buffer();
            StreamFrameWriter.writeDeliverHeader(header, 3, stored.readableBytes());
            try (FileChannel file = FileChannel.open(segment)) {
                peer.write(0, header, new DefaultFileRegion(file, 0, stored.readableBytes()));
                assertThat(event()).startsWith("chunk 3 200 1 ");
                assertThat(event()).isEqualTo("message 3 200 0 from a file");
            }
        } finally {
            Files.delete(segment);
        }

        client.credit((byte) 3, 1);
        assertThat(peer.next(StreamTestPeer.Credit.class)).isEqualTo(new StreamTestPeer.Credit(3, 1));
        peer.send(0, new ConsumerCommand.CreditResponse(ResponseCode.SUBSCRIPTION_ID_DOES_NOT_EXIST, 9));
        assertThat(event()).isEqualTo("credit 9 4");

        client.storeOffset("app-1", "orders", 101);
        assertThat(peer.next(StreamTestPeer.StoreOffset.class))
            .isEqualTo(new StreamTestPeer.StoreOffset("app-1", "orders", 101));
        peer.answer(CommandKey.QUERY_OFFSET, q -> new ConsumerCommand.QueryOffsetResponse(
            ((Correlated) q).correlationId(), ResponseCode.NO_OFFSET, 0));
        Client.QueryOffsetResponse offset = client.queryOffset("app-2", "orders");
        assertThat(offset.getResponseCode()).isEqualTo((short) 0x13);
        assertThat(peer.next(ConsumerCommand.QueryOffset.class).reference()).isEqualTo("app-2");

        peer.answer(CommandKey.RESOLVE_OFFSET_SPEC, r -> new ConsumerCommand.ResolveOffsetSpecResponse(
            ((Correlated) r).correlationId(), ResponseCode.OK, OffsetSpec.Type.OFFSET, 1_234));
        Client.ResolveOffsetSpecResponse resolved = client.resolveOffsetSpec("orders", OffsetSpecification.last(),
            Map.of("filter.0", "eu"));
        assertThat(resolved.offsetType()).isEqualTo((short) 4);
        assertThat(resolved.offset()).isEqualTo(1_234);
        ConsumerCommand.ResolveOffsetSpec resolve = peer.next(ConsumerCommand.ResolveOffsetSpec.class);
        assertThat(resolve.offset()).isEqualTo(OffsetSpec.LAST);
        assertThat(resolve.properties()).isEqualTo(Map.of("filter.0", "eu"));

        // single active consumer: our request, the client's answer with the offset its listener chose
        peer.send(0, new ConsumerCommand.ConsumerUpdate(77, 3, true));
        assertThat(event()).isEqualTo("consumer update 3 true");
        assertThat(peer.next(ConsumerCommand.ConsumerUpdateResponse.class))
            .isEqualTo(new ConsumerCommand.ConsumerUpdateResponse(77, ResponseCode.OK, OffsetSpec.offset(7)));

        assertThat(client.unsubscribe((byte) 3).isOk()).isTrue();
        assertThat(peer.next(ConsumerCommand.Unsubscribe.class).subscriptionId()).isEqualTo(3);
    }

    /** A user chunk of simple entries, each a message the client's codec encoded. */
    private static ByteBuf amqpChunk(long chunkId, String... bodies) {
        ByteBuf data = Unpooled.buffer();
        for (String body : bodies) {
            AMQP.encode(message(body)).writeTo(data);
        }
        CRC32 crc = new CRC32();
        crc.update(data.nioBuffer());
        return Unpooled.buffer().writeByte(DeliverFrame.CHUNK_MAGIC_VERSION).writeByte(0).writeShort(bodies.length)
            .writeInt(bodies.length).writeLong(System.currentTimeMillis()).writeLong(1).writeLong(chunkId)
            .writeInt((int) crc.getValue()).writeInt(data.readableBytes()).writeInt(0).writeInt(0).writeBytes(data);
    }

    @Test
    void streamsSuperStreamsAndMetadata() throws Exception {
        client();
        handshake();
        assertThat(client.create("orders", Map.of("max-age", "7D")).isOk()).isTrue();
        assertThat(peer.next(ManagementCommand.CreateStream.class).arguments()).isEqualTo(Map.of("max-age", "7D"));
        peer.answer(CommandKey.DELETE_STREAM, d -> new Response(CommandKey.DELETE_STREAM,
            ((Correlated) d).correlationId(), ResponseCode.STREAM_DOES_NOT_EXIST));
        assertThat(client.delete("orders").getResponseCode()).isEqualTo((short) 2);
        assertThat(peer.next(ManagementCommand.DeleteStream.class).stream()).isEqualTo("orders");

        peer.answer(CommandKey.METADATA, m -> new ManagementCommand.MetadataResponse(((Correlated) m).correlationId(),
            List.of(new Broker(0, "node-0", 5552), new Broker(1, "node-1", 5553)),
            List.of(new StreamMetadata("orders", ResponseCode.OK, 1, List.of(0)),
                new StreamMetadata("gone", ResponseCode.STREAM_DOES_NOT_EXIST, ManagementCommand.NO_LEADER,
                    List.of()))));
        Map<String, Client.StreamMetadata> metadata = client.metadata("orders", "gone");
        assertThat(peer.next(ManagementCommand.Metadata.class).streams()).containsExactly("orders", "gone");
        assertThat(metadata.get("orders").getLeader()).isEqualTo(new Client.Broker("node-1", 5553));
        assertThat(metadata.get("orders").getReplicas()).containsExactly(new Client.Broker("node-0", 5552));
        assertThat(metadata.get("gone").getResponseCode()).isEqualTo((short) 2);
        assertThat(metadata.get("gone").getLeader()).isNull();

        peer.send(0, new ManagementCommand.MetadataUpdate(ResponseCode.STREAM_NOT_AVAILABLE, "orders"));
        assertThat(event()).isEqualTo("metadata orders 6");

        peer.answer(CommandKey.ROUTE, r -> new ManagementCommand.StreamsResponse(CommandKey.ROUTE,
            ((Correlated) r).correlationId(), ResponseCode.OK, List.of("invoices-1")));
        assertThat(client.route("eu", "invoices")).containsExactly("invoices-1");
        assertThat(peer.next(ManagementCommand.Route.class)).extracting(ManagementCommand.Route::routingKey,
            ManagementCommand.Route::superStream).containsExactly("eu", "invoices");
        peer.answer(CommandKey.PARTITIONS, r -> new ManagementCommand.StreamsResponse(CommandKey.PARTITIONS,
            ((Correlated) r).correlationId(), ResponseCode.OK, List.of("invoices-0", "invoices-1")));
        assertThat(client.partitions("invoices")).containsExactly("invoices-0", "invoices-1");
        assertThat(peer.next(ManagementCommand.Partitions.class).superStream()).isEqualTo("invoices");

        peer.answer(CommandKey.STREAM_STATS, r -> new ManagementCommand.StreamStatsResponse(
            ((Correlated) r).correlationId(), ResponseCode.OK,
            Map.of("first_chunk_id", 0L, "committed_chunk_id", 7L, "last_chunk_id", 9L)));
        assertThat(client.streamStats("orders").getInfo()).containsEntry("committed_chunk_id", 7L)
            .containsEntry("last_chunk_id", 9L);
        assertThat(peer.next(ManagementCommand.StreamStats.class).stream()).isEqualTo("orders");

        // the client keeps super stream management package-private
        Method create = Client.class.getDeclaredMethod("createSuperStream", String.class, List.class, List.class,
            Map.class);
        create.setAccessible(true);
        assertThat(((Client.Response) create.invoke(client, "invoices", List.of("invoices-0", "invoices-1"),
            List.of("0", "1"), Map.of("max-length-bytes", "1000"))).isOk()).isTrue();
        ManagementCommand.CreateSuperStream superStream = peer.next(ManagementCommand.CreateSuperStream.class);
        assertThat(superStream.partitions()).containsExactly("invoices-0", "invoices-1");
        assertThat(superStream.bindingKeys()).containsExactly("0", "1");
        assertThat(superStream.arguments()).isEqualTo(Map.of("max-length-bytes", "1000"));
        Method delete = Client.class.getDeclaredMethod("deleteSuperStream", String.class);
        delete.setAccessible(true);
        assertThat(((Client.Response) delete.invoke(client, "invoices")).isOk()).isTrue();
        assertThat(peer.next(ManagementCommand.DeleteSuperStream.class).name()).isEqualTo("invoices");
    }

    @Test
    void heartbeatsAndAClosingServer() throws Exception {
        peer.heartbeat(1);
        CountDownLatch shutdown = new CountDownLatch(1);
        client = new Client(new Client.ClientParameters().host("localhost").port(peer.port())
            .requestedHeartbeat(Duration.ofSeconds(1)).shutdownListener(c -> shutdown.countDown()));
        handshake();
        // idle for a second, the client sends a heartbeat
        assertThat(peer.next(ConnectionCommand.Heartbeat.class)).isSameAs(ConnectionCommand.Heartbeat.INSTANCE);
        peer.send(0, StreamFrameWriter::writeHeartbeat);
        // the server closes as RabbitMQ does after an unknown frame; the client answers and shuts down
        peer.send(0, new ConnectionCommand.Close(1, ResponseCode.UNKNOWN_FRAME.code(), "unknown frame"));
        assertThat(peer.find(Response.class)).isEqualTo(new Response(CommandKey.CLOSE, 1, ResponseCode.OK));
        assertThat(shutdown.await(10, TimeUnit.SECONDS)).isTrue();
        client = null;
    }

    @Test
    void aClientClosing() throws Exception {
        client();
        handshake();
        client.close();
        client = null;
        assertThat(peer.next(ConnectionCommand.Close.class)).extracting(ConnectionCommand.Close::closingCode,
            ConnectionCommand.Close::reason).containsExactly(1, "OK");
    }

    @Test
    void aProducerWithFilterValuesPublishesV2() throws Exception {
        try (Environment environment = Environment.builder().host("localhost").port(peer.port()).build()) {
            Producer producer = environment.producerBuilder().stream("orders")
                .filterValue(m -> m.getApplicationProperties() == null ? null
                    : (String) m.getApplicationProperties().get("region"))
                .batchPublishingDelay(Duration.ofMillis(10)).build();
            CountDownLatch confirmed = new CountDownLatch(2);
            producer.send(producer.messageBuilder().applicationProperties().entry("region", "eu")
                .messageBuilder().addData("first".getBytes(StandardCharsets.UTF_8)).build(),
                status -> confirmed.countDown());
            producer.send(producer.messageBuilder().addData("second".getBytes(StandardCharsets.UTF_8)).build(),
                status -> confirmed.countDown());
            // the producer has a connection of its own, besides the environment's locator
            List<StreamTestPeer.Entry> entries = new java.util.ArrayList<>();
            while (entries.size() < 2) {
                StreamTestPeer.Received received = peer.received(StreamTestPeer.Publish.class);
                StreamTestPeer.Publish publish = (StreamTestPeer.Publish) received.what();
                assertThat(publish.version()).isEqualTo(2);
                entries.addAll(publish.entries());
                peer.send(received.connection(), out -> {
                    int start = PublishFrameWriter.beginConfirm(out, publish.publisherId());
                    publish.entries().forEach(e -> PublishFrameWriter.addConfirm(out, e.publishingId()));
                    PublishFrameWriter.endConfirm(out, start);
                });
            }
            assertThat(entries).extracting(StreamTestPeer.Entry::filterValue).containsExactly("eu", null);
            assertThat(confirmed.await(10, TimeUnit.SECONDS)).isTrue();
            producer.close();
        }
    }
}
