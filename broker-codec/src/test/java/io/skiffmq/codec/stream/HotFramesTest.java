package io.skiffmq.codec.stream;

import static io.skiffmq.codec.stream.StreamCodecTest.framed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-message commands: writers and flyweights against each other and against PROTOCOL.adoc's layouts. */
class HotFramesTest {

    /** A frame as the decoder emits it: from the key on. */
    static ByteBuf emitted(byte[] frame) {
        return Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
    }

    static DecodeFailure publishFailure(byte[] frame) {
        try {
            new PublishFrame().wrap(emitted(frame));
            return null;
        } catch (StreamDecodeException e) {
            return e.failure();
        }
    }

    @Test
    void publishV1IteratesIdsMessagesAndBatchesInPlace() throws Exception {
        byte[] bytes = StreamSamples.publishV1(3, 1_000, 4);
        ByteBuf frame = emitted(bytes);
        PublishFrame publish = new PublishFrame().wrap(frame);
        assertThat(publish.version()).isEqualTo(1);
        assertThat(publish.publisherId()).isEqualTo(3);
        assertThat(publish.count()).isEqualTo(5);
        List<String> seen = new ArrayList<>();
        while (publish.next()) {
            assertThat(publish.hasFilterValue()).isFalse();
            String data = ByteBufUtil.hexDump(frame, publish.messageIndex(), publish.messageLength());
            seen.add(publish.publishingId() + (publish.isSubEntryBatch() ? " batch " + publish.records() + " " : " ")
                + data);
            // the entry as a chunk stores it: type bit and size, then the data
            assertThat(publish.entryIndex() + publish.entryLength())
                .isEqualTo(publish.messageIndex() + publish.messageLength());
        }
        assertThat(seen).containsExactly("1000 ", "1001 01020304050607", "1002 02030405060708090a0b0c0d0e0f",
            "1003 030405060708090a0b0c0d0e0f1011121314151617", "1004 batch 2 00000003616263" + "00000000");
        assertThat(frame.readerIndex()).as("the frame's indexes are left alone").isZero();
        publish.rewind();
        assertThat(publish.next()).isTrue();
        assertThat(publish.publishingId()).isEqualTo(1_000);
    }

    @Test
    void publishV2CarriesAFilterValuePerMessage() throws Exception {
        ByteBuf frame = emitted(StreamSamples.publishV2(9, 7, 4));
        PublishFrame publish = new PublishFrame().wrap(frame);
        assertThat(publish.version()).isEqualTo(2);
        List<String> filters = new ArrayList<>();
        while (publish.next()) {
            filters.add(publish.filterValue());
            assertThat(publish.messageLength()).isEqualTo(10 + (int) (publish.publishingId() - 7));
        }
        assertThat(filters).containsExactly(null, "region-1", "region-2", null);
    }

    @Test
    void publishIsProtocolAdocsLayout() throws Exception {
        // publisher 1, two messages: id 5 "hi", id 6 (no filter) "" in v2 with filter "eu" on the first
        byte[] v1 = framed("0002 0001 01 00000002 0000000000000005 00000002 6869 0000000000000006 00000000");
        PublishFrame publish = new PublishFrame().wrap(emitted(v1));
        assertThat(publish.count()).isEqualTo(2);
        byte[] v2 = framed("0002 0002 01 00000002 0000000000000005 0002 6575 00000002 6869"
            + " 0000000000000006 ffff 00000000");
        publish.wrap(emitted(v2));
        assertThat(publish.next()).isTrue();
        assertThat(publish.filterValue()).isEqualTo("eu");
        assertThat(publish.next()).isTrue();
        assertThat(publish.filterValue()).isNull();
        assertThat(publish.filterValueIndex()).isEqualTo(-1);
        assertThat(publish.filterValueLength()).isEqualTo(-1);
        assertThat(publish.messageLength()).isZero();
        assertThat(publish.next()).isFalse();
    }

    @Test
    void malformedPublishesFailTyped() {
        // count says 3, two messages follow, then a third that runs past the frame
        assertThat(publishFailure(framed("0002 0001 01 00000003 0000000000000005 00000000 0000000000000006 00000000"
            + " 0000000000000007 000000ff"))).isEqualTo(DecodeFailure.BAD_FIELDS);
        assertThat(publishFailure(framed("0002 0001 01 00000001 0000000000000005 00000000 0000000000000006 00000000")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
        // 2^32 - 1 messages in 12 bytes: refused before walking them
        assertThat(publishFailure(framed("0002 0001 01 ffffffff 0000000000000005 00000000")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
        // a message size running past the frame
        assertThat(publishFailure(framed("0002 0001 01 00000001 0000000000000005 00000009 6869")))
            .isEqualTo(DecodeFailure.BAD_FIELDS);
        // a sub-entry batch whose size runs past the frame, and one in v2, which RabbitMQ does not parse
        assertThat(publishFailure(framed("0002 0001 01 00000001 0000000000000005 80 0001 00000004 7fffffff")))
            .isEqualTo(DecodeFailure.BAD_FIELDS);
        assertThat(publishFailure(framed("0002 0002 01 00000001 0000000000000005 ffff 80 0001 00000004 00000000")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
        // filter value of length -2, and one running past the frame
        assertThat(publishFailure(framed("0002 0002 01 00000001 0000000000000005 fffe 00000000")))
            .isEqualTo(DecodeFailure.BAD_VALUE);
        assertThat(publishFailure(framed("0002 0002 01 00000001 0000000000000005 0100 00000000")))
            .isEqualTo(DecodeFailure.BAD_FIELDS);
        assertThat(publishFailure(framed("0002 0003 01 00000000"))).isEqualTo(DecodeFailure.UNKNOWN_COMMAND);
        assertThat(publishFailure(framed("0002 0001 01 0000"))).isEqualTo(DecodeFailure.BAD_FIELDS);
        assertThatThrownBy(() -> new PublishFrame().wrap(emitted(StreamSamples.heartbeat())))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyPrefixOfAPublishFailsTyped() {
        byte[] bytes = StreamSamples.publishV2(1, 1, 6);
        for (int length = 8; length < bytes.length; length++) {
            byte[] cut = java.util.Arrays.copyOf(bytes, length);
            ByteBuffer.wrap(cut).putInt(length - 4);
            assertThat(publishFailure(cut)).as("cut to %d", length).isIn(DecodeFailure.BAD_FIELDS,
                DecodeFailure.BAD_VALUE);
        }
    }

    @Test
    void confirmsAndErrors() throws Exception {
        byte[] confirm = StreamSamples.confirm(4, 1, 2, Long.MAX_VALUE, -1);
        assertThat(confirm).isEqualTo(framed("0003 0001 04 00000004 0000000000000001 0000000000000002"
            + " 7fffffffffffffff ffffffffffffffff"));
        PublishConfirmFrame c = new PublishConfirmFrame().wrap(emitted(confirm));
        assertThat(c.publisherId()).isEqualTo(4);
        assertThat(c.count()).isEqualTo(4);
        assertThat(c.publishingId(2)).isEqualTo(Long.MAX_VALUE);
        assertThat(c.publishingId(3)).isEqualTo(-1);
        byte[] error = StreamSamples.error(5, 10, 11);
        assertThat(error).isEqualTo(framed("0004 0001 05 00000002 000000000000000a 0012 000000000000000b 0012"));
        PublishErrorFrame e = new PublishErrorFrame().wrap(emitted(error));
        assertThat(e.count()).isEqualTo(2);
        assertThat(e.publishingId(1)).isEqualTo(11);
        assertThat(ResponseCode.of(e.code(1))).isEqualTo(ResponseCode.PUBLISHER_DOES_NOT_EXIST);
        assertThatThrownBy(() -> new PublishConfirmFrame().wrap(emitted(framed("0003 0001 04 00000002 0000000000000001"))))
            .isInstanceOfSatisfying(StreamDecodeException.class,
                x -> assertThat(x.failure()).isEqualTo(DecodeFailure.BAD_FIELDS));
        assertThatThrownBy(() -> new PublishErrorFrame().wrap(emitted(framed("0004 0001 04 ffffffff"))))
            .isInstanceOf(StreamDecodeException.class);
        assertThatThrownBy(() -> new PublishErrorFrame().wrap(emitted(framed("0004 0001 04"))))
            .isInstanceOf(StreamDecodeException.class);
    }

    @Test
    void creditAndStoreOffset() throws Exception {
        byte[] credit = StreamSamples.credit(7, 65_535);
        assertThat(credit).isEqualTo(framed("0009 0001 07 ffff"));
        CreditFrame c = new CreditFrame().wrap(emitted(credit));
        assertThat(c.subscriptionId()).isEqualTo(7);
        assertThat(c.credit()).isEqualTo(65_535);
        assertThatThrownBy(() -> new CreditFrame().wrap(emitted(framed("0009 0001 07 00"))))
            .isInstanceOf(StreamDecodeException.class);

        byte[] store = StreamSamples.storeOffset("app-1", "örders", 42);
        assertThat(store).isEqualTo(framed("000a 0001 0005 6170702d31 0007 c3b6726465727 3 000000000000002a"
            .replace(" 3 ", "3 ")));
        StoreOffsetFrame s = new StoreOffsetFrame().wrap(emitted(store));
        assertThat(s.reference()).isEqualTo("app-1");
        assertThat(s.stream()).isEqualTo("örders");
        assertThat(s.streamLength()).isEqualTo(7);
        assertThat(s.offset()).isEqualTo(42);
        for (String bad : new String[] {"000a 0001 0005 6170702d31 0001 78 00000000000000", "000a 0001 ffff",
                "000a 0001 0001 78 8000 000000000000002a", "000a 0001 0009 78"}) {
            assertThatThrownBy(() -> new StoreOffsetFrame().wrap(emitted(framed(bad)))).as(bad)
                .isInstanceOf(StreamDecodeException.class);
        }
    }

    @Test
    void deliverHeadersPrecedeTheChunkAsItIs() throws Exception {
        ByteBuf chunk = StreamSamples.chunk(100, 3, 12);
        byte[] v1 = StreamSamples.deliver(1, 5, 0, chunk);
        assertThat(ByteBuffer.wrap(v1).getInt()).isEqualTo(5 + chunk.readableBytes());
        DeliverFrame d = new DeliverFrame().wrap(emitted(v1));
        assertThat(d.version()).isEqualTo(1);
        assertThat(d.subscriptionId()).isEqualTo(5);
        assertThat(d.committedChunkId()).isZero();
        assertThat(d.magicVersion()).isEqualTo(0x50);
        assertThat(d.chunkId()).isEqualTo(100);
        assertThat(d.entries()).isEqualTo(3);
        assertThat(d.records()).isEqualTo(3);
        assertThat(d.dataLength()).isEqualTo(3 * 16);
        assertThat(d.chunkLength()).isEqualTo(chunk.readableBytes());
        assertThat(d.frame().getInt(d.dataIndex())).isEqualTo(12);

        byte[] v2 = StreamSamples.deliver(2, 6, 99, chunk);
        assertThat(ByteBuffer.wrap(v2).getInt()).isEqualTo(13 + chunk.readableBytes());
        d.wrap(emitted(v2));
        assertThat(d.committedChunkId()).isEqualTo(99);
        assertThat(d.chunkIndex()).isEqualTo(13);
        assertThat(d.timestamp()).isEqualTo(1_700_000_000_000L);

        ByteBuf header = Unpooled.buffer();
        StreamFrameWriter.writeDeliverHeader(header, 6, 99, 48);
        assertThat(header.readableBytes()).isEqualTo(StreamFrameWriter.DELIVER_V2_HEADER);
        assertThatThrownBy(() -> StreamFrameWriter.writeDeliverHeader(header, 6, 47))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DeliverFrame().wrap(emitted(framed("0008 0002 06 0000000000000063"))))
            .isInstanceOf(StreamDecodeException.class);
    }

    @Test
    void heartbeatIsKeyAndVersionOnly() throws Exception {
        assertThat(StreamSamples.heartbeat()).isEqualTo(framed("0017 0001"));
        assertThat(StreamCodec.decode(emitted(StreamSamples.heartbeat())))
            .isSameAs(ConnectionCommand.Heartbeat.INSTANCE);
    }
}
