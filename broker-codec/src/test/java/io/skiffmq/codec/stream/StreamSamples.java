package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.stream.ConnectionCommand.CommandVersion;
import io.skiffmq.codec.stream.ManagementCommand.Broker;
import io.skiffmq.codec.stream.ManagementCommand.StreamMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every command record with representative values (unicode, empty and absent optional parts, extreme numbers), and
 * whole frames of the per-message commands, for round trips, the hostile corpus and the fuzz seeds.
 */
final class StreamSamples {
    record Sample(String name, Command command) {
        @Override
        public String toString() {
            return name;
        }
    }

    private StreamSamples() {
    }

    /** In a fixed order: the corpus made from these samples must come out the same in every run. */
    private static Map<String, Long> stats() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("first_chunk_id", 0L);
        m.put("committed_chunk_id", 1_000L);
        m.put("last_chunk_id", -1L);
        return m;
    }

    /** A map in the order given (unlike {@code Map.of}, whose order changes from one JVM to the next). */
    static Map<String, String> map(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static List<Sample> commands() {
        List<Sample> s = new ArrayList<>();
        long max32 = 0xffff_ffffL;
        s.add(new Sample("peer-properties", new ConnectionCommand.PeerProperties(1,
            map("product", "RabbitMQ Stream", "version", "1.11.0", "connection_name", "ünïcödé ✓"))));
        s.add(new Sample("peer-properties-empty", new ConnectionCommand.PeerProperties(max32, Map.of())));
        s.add(new Sample("peer-properties-response", new ConnectionCommand.PeerPropertiesResponse(1, ResponseCode.OK,
            map("product", "SkiffMQ", "version", "4.1.0", "cluster_name", "skiff@localhost"))));
        s.add(new Sample("sasl-handshake", new ConnectionCommand.SaslHandshake(2)));
        s.add(new Sample("sasl-handshake-response", new ConnectionCommand.SaslHandshakeResponse(2, ResponseCode.OK,
            List.of("PLAIN", "ANONYMOUS", "EXTERNAL"))));
        s.add(new Sample("sasl-authenticate", new ConnectionCommand.SaslAuthenticate(3, "PLAIN",
            Bytes.wrap("\0guest\0guest".getBytes(StandardCharsets.UTF_8)))));
        s.add(new Sample("sasl-authenticate-null", new ConnectionCommand.SaslAuthenticate(3, "ANONYMOUS", null)));
        s.add(new Sample("sasl-authenticate-empty", new ConnectionCommand.SaslAuthenticate(3, "EXTERNAL",
            Bytes.wrap(new byte[0]))));
        s.add(new Sample("sasl-authenticate-response", new ConnectionCommand.SaslAuthenticateResponse(3,
            ResponseCode.OK, null)));
        s.add(new Sample("sasl-authenticate-challenge", new ConnectionCommand.SaslAuthenticateResponse(3,
            ResponseCode.SASL_CHALLENGE, Bytes.wrap(new byte[] {1, 2, 3}))));
        s.add(new Sample("sasl-authenticate-failure", new ConnectionCommand.SaslAuthenticateResponse(3,
            ResponseCode.AUTHENTICATION_FAILURE, null)));
        s.add(new Sample("tune", new ConnectionCommand.Tune(1_048_576, 60, false)));
        s.add(new Sample("tune-response", new ConnectionCommand.Tune(0, 0, true)));
        s.add(new Sample("open", new ConnectionCommand.Open(4, "/")));
        s.add(new Sample("open-response", new ConnectionCommand.OpenResponse(4, ResponseCode.OK,
            map("advertised_host", "localhost", "advertised_port", "5552"))));
        s.add(new Sample("open-refused", new ConnectionCommand.OpenResponse(4,
            ResponseCode.VIRTUAL_HOST_ACCESS_FAILURE, Map.of())));
        s.add(new Sample("close", new ConnectionCommand.Close(5, ResponseCode.OK.code(), "OK")));
        s.add(new Sample("close-unknown-frame", new ConnectionCommand.Close(1, ResponseCode.UNKNOWN_FRAME.code(),
            "unknown frame")));
        s.add(new Sample("close-response", new Response(CommandKey.CLOSE, 5, ResponseCode.OK)));
        s.add(new Sample("heartbeat", ConnectionCommand.Heartbeat.INSTANCE));
        s.add(new Sample("exchange-command-versions", new ConnectionCommand.ExchangeCommandVersions(6,
            List.of(new CommandVersion(0x08, 1, 2), new CommandVersion(0x1a, 1, 1)))));
        s.add(new Sample("exchange-command-versions-response", new ConnectionCommand.ExchangeCommandVersionsResponse(
            6, ResponseCode.OK, List.of(new CommandVersion(0x01, 1, 1), new CommandVersion(0x02, 1, 2)))));
        s.add(new Sample("declare-publisher", new PublisherCommand.DeclarePublisher(7, 0, "", "orders")));
        s.add(new Sample("declare-publisher-named", new PublisherCommand.DeclarePublisher(7, 255, "producer-1",
            "stream-ä")));
        s.add(new Sample("declare-publisher-response", new Response(CommandKey.DECLARE_PUBLISHER, 7,
            ResponseCode.STREAM_DOES_NOT_EXIST)));
        s.add(new Sample("query-publisher-sequence", new PublisherCommand.QueryPublisherSequence(8, "producer-1",
            "orders")));
        s.add(new Sample("query-publisher-sequence-response", new PublisherCommand.QueryPublisherSequenceResponse(8,
            ResponseCode.OK, -1L)));
        s.add(new Sample("delete-publisher", new PublisherCommand.DeletePublisher(9, 17)));
        s.add(new Sample("delete-publisher-response", new Response(CommandKey.DELETE_PUBLISHER, 9,
            ResponseCode.PUBLISHER_DOES_NOT_EXIST)));
        s.add(new Sample("subscribe-first", new ConsumerCommand.Subscribe(10, 0, "orders", OffsetSpec.FIRST, 10,
            Map.of())));
        s.add(new Sample("subscribe-last", new ConsumerCommand.Subscribe(10, 1, "orders", OffsetSpec.LAST, 1,
            Map.of())));
        s.add(new Sample("subscribe-next", new ConsumerCommand.Subscribe(10, 2, "orders", OffsetSpec.NEXT, 0,
            map("single-active-consumer", "true", "name", "app-1", "super-stream", "invoices"))));
        s.add(new Sample("subscribe-offset", new ConsumerCommand.Subscribe(10, 3, "orders",
            OffsetSpec.offset(-2L), 65_535, map("filter.0", "eu", "filter.1", "us", "match-unfiltered", "true"))));
        s.add(new Sample("subscribe-timestamp", new ConsumerCommand.Subscribe(10, 255, "orders",
            OffsetSpec.timestamp(1_700_000_000_000L), 10, Map.of())));
        s.add(new Sample("subscribe-response", new Response(CommandKey.SUBSCRIBE, 10,
            ResponseCode.SUBSCRIPTION_ID_ALREADY_EXISTS)));
        s.add(new Sample("credit-response", new ConsumerCommand.CreditResponse(
            ResponseCode.SUBSCRIPTION_ID_DOES_NOT_EXIST, 42)));
        s.add(new Sample("query-offset", new ConsumerCommand.QueryOffset(11, "app-1", "orders")));
        s.add(new Sample("query-offset-response", new ConsumerCommand.QueryOffsetResponse(11,
            ResponseCode.NO_OFFSET, 0)));
        s.add(new Sample("unsubscribe", new ConsumerCommand.Unsubscribe(12, 3)));
        s.add(new Sample("unsubscribe-response", new Response(CommandKey.UNSUBSCRIBE, 12, ResponseCode.OK)));
        s.add(new Sample("create", new ManagementCommand.CreateStream(13, "orders",
            map("max-length-bytes", "20000000000", "max-age", "7D", "stream-max-segment-size-bytes", "500000000",
                "queue-leader-locator", "least-leaders", "initial-cluster-size", "1",
                "stream-filter-size-bytes", "32"))));
        s.add(new Sample("create-response", new Response(CommandKey.CREATE_STREAM, 13,
            ResponseCode.STREAM_ALREADY_EXISTS)));
        s.add(new Sample("delete", new ManagementCommand.DeleteStream(14, "orders")));
        s.add(new Sample("delete-response", new Response(CommandKey.DELETE_STREAM, 14, ResponseCode.ACCESS_REFUSED)));
        s.add(new Sample("metadata", new ManagementCommand.Metadata(15, List.of("orders", "invoices-0"))));
        s.add(new Sample("metadata-response", new ManagementCommand.MetadataResponse(15,
            List.of(new Broker(0, "localhost", 5552), new Broker(1, "node-2.example", 5551)),
            List.of(new StreamMetadata("orders", ResponseCode.OK, 0, List.of(1)),
                new StreamMetadata("gone", ResponseCode.STREAM_DOES_NOT_EXIST, ManagementCommand.NO_LEADER,
                    List.of())))));
        s.add(new Sample("metadata-update", new ManagementCommand.MetadataUpdate(ResponseCode.STREAM_NOT_AVAILABLE,
            "orders")));
        s.add(new Sample("route", new ManagementCommand.Route(24, "eu", "invoices")));
        s.add(new Sample("route-response", new ManagementCommand.StreamsResponse(CommandKey.ROUTE, 24,
            ResponseCode.OK, List.of("invoices-0"))));
        s.add(new Sample("partitions", new ManagementCommand.Partitions(25, "invoices")));
        s.add(new Sample("partitions-response", new ManagementCommand.StreamsResponse(CommandKey.PARTITIONS, 25,
            ResponseCode.OK, List.of("invoices-0", "invoices-1", "invoices-2"))));
        s.add(new Sample("consumer-update", new ConsumerCommand.ConsumerUpdate(26, 3, true)));
        s.add(new Sample("consumer-update-inactive", new ConsumerCommand.ConsumerUpdate(26, 3, false)));
        s.add(new Sample("consumer-update-response", new ConsumerCommand.ConsumerUpdateResponse(26, ResponseCode.OK,
            OffsetSpec.offset(12_345))));
        s.add(new Sample("consumer-update-response-none", new ConsumerCommand.ConsumerUpdateResponse(26,
            ResponseCode.OK, OffsetSpec.NONE)));
        s.add(new Sample("stream-stats", new ManagementCommand.StreamStats(28, "orders")));
        s.add(new Sample("stream-stats-response", new ManagementCommand.StreamStatsResponse(28, ResponseCode.OK,
            stats())));
        s.add(new Sample("create-super-stream", new ManagementCommand.CreateSuperStream(29, "invoices",
            List.of("invoices-0", "invoices-1"), List.of("0", "1"), map("max-age", "1h"))));
        s.add(new Sample("create-super-stream-response", new Response(CommandKey.CREATE_SUPER_STREAM, 29,
            ResponseCode.PRECONDITION_FAILED)));
        s.add(new Sample("delete-super-stream", new ManagementCommand.DeleteSuperStream(30, "invoices")));
        s.add(new Sample("delete-super-stream-response", new Response(CommandKey.DELETE_SUPER_STREAM, 30,
            ResponseCode.OK)));
        s.add(new Sample("resolve-offset-spec", new ConsumerCommand.ResolveOffsetSpec(31, "orders",
            OffsetSpec.timestamp(-1), map("filter.0", "eu", "chunk_selector", "all"))));
        s.add(new Sample("resolve-offset-spec-next", new ConsumerCommand.ResolveOffsetSpec(31, "orders",
            OffsetSpec.NEXT, Map.of())));
        s.add(new Sample("resolve-offset-spec-response", new ConsumerCommand.ResolveOffsetSpecResponse(31,
            ResponseCode.OK, OffsetSpec.Type.OFFSET, 4_242)));
        return s;
    }

    static byte[] frame(Command command) {
        ByteBuf out = Unpooled.buffer();
        StreamFrameWriter.writeCommand(out, command);
        return ByteBufUtil.getBytes(out);
    }

    /** A message of {@code length} bytes, its first byte {@code seed}. */
    static ByteBuf message(int seed, int length) {
        ByteBuf m = Unpooled.buffer(length);
        for (int i = 0; i < length; i++) {
            m.writeByte(seed + i);
        }
        return m;
    }

    /** A v1 publish of {@code count} messages, publishing ids from {@code firstId}, with a sub-entry batch last. */
    static byte[] publishV1(int publisherId, long firstId, int count) {
        ByteBuf out = Unpooled.buffer();
        int start = PublishFrameWriter.beginPublish(out, 1, publisherId);
        for (int i = 0; i < count; i++) {
            PublishFrameWriter.addMessage(out, firstId + i, message(i, i % 5 * 7));
        }
        ByteBuf batch = Unpooled.buffer();
        batch.writeInt(3).writeBytes(new byte[] {'a', 'b', 'c'}).writeInt(0);
        PublishFrameWriter.addSubEntryBatch(out, firstId + count, 0, 2, batch.readableBytes(), batch);
        PublishFrameWriter.endPublish(out, start, count + 1);
        return ByteBufUtil.getBytes(out);
    }

    /** A v2 publish: filter values on some messages, absent (-1) on others. */
    static byte[] publishV2(int publisherId, long firstId, int count) {
        ByteBuf out = Unpooled.buffer();
        int start = PublishFrameWriter.beginPublish(out, 2, publisherId);
        for (int i = 0; i < count; i++) {
            PublishFrameWriter.addMessage(out, firstId + i, i % 3 == 0 ? null : "region-" + i, message(i, 10 + i));
        }
        PublishFrameWriter.endPublish(out, start, count);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] confirm(int publisherId, long... ids) {
        ByteBuf out = Unpooled.buffer();
        int start = PublishFrameWriter.beginConfirm(out, publisherId);
        for (long id : ids) {
            PublishFrameWriter.addConfirm(out, id);
        }
        PublishFrameWriter.endConfirm(out, start);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] error(int publisherId, long... ids) {
        ByteBuf out = Unpooled.buffer();
        int start = PublishFrameWriter.beginError(out, publisherId);
        for (long id : ids) {
            PublishFrameWriter.addError(out, id, ResponseCode.PUBLISHER_DOES_NOT_EXIST);
        }
        PublishFrameWriter.endError(out, start);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] credit(int subscriptionId, int credit) {
        ByteBuf out = Unpooled.buffer();
        StreamFrameWriter.writeCredit(out, subscriptionId, credit);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] storeOffset(String reference, String stream, long offset) {
        ByteBuf out = Unpooled.buffer();
        StreamFrameWriter.writeStoreOffset(out, reference, stream, offset);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] heartbeat() {
        ByteBuf out = Unpooled.buffer();
        StreamFrameWriter.writeHeartbeat(out);
        return ByteBufUtil.getBytes(out);
    }

    /**
     * A chunk of {@code entries} simple entries of {@code size} bytes each, as a consumer receives it: the 48-byte
     * header with its CRC-32 over the entries, then the entries.
     */
    static ByteBuf chunk(long chunkId, int entries, int size) {
        ByteBuf data = Unpooled.buffer();
        for (int i = 0; i < entries; i++) {
            data.writeInt(size).writeBytes(message(i, size));
        }
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(data.nioBuffer());
        ByteBuf chunk = Unpooled.buffer();
        chunk.writeByte(DeliverFrame.CHUNK_MAGIC_VERSION).writeByte(0).writeShort(entries).writeInt(entries)
            .writeLong(1_700_000_000_000L).writeLong(1).writeLong(chunkId).writeInt((int) crc.getValue())
            .writeInt(data.readableBytes()).writeInt(0).writeByte(0).writeMedium(0);
        return chunk.writeBytes(data);
    }

    /** A whole deliver frame, header from the writer and the chunk after it. */
    static byte[] deliver(int version, int subscriptionId, long committed, ByteBuf chunk) {
        ByteBuf out = Unpooled.buffer();
        if (version == 1) {
            StreamFrameWriter.writeDeliverHeader(out, subscriptionId, chunk.readableBytes());
        } else {
            StreamFrameWriter.writeDeliverHeader(out, subscriptionId, committed, chunk.readableBytes());
        }
        out.writeBytes(chunk, chunk.readerIndex(), chunk.readableBytes());
        return ByteBufUtil.getBytes(out);
    }
}
