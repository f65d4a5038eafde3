package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Hostile inputs for a stream protocol server (what a client may send on port 5552), generated deterministically
 * from valid conversations: truncations, lying frame sizes, unknown keys and versions, commands from the wrong end,
 * byte flips, lengths and counts set to -1, 0x7fff or 2^31, publishes whose entries lie, huge maps, frames past
 * the 8 KiB allowed before open. Written to {@code src/test/resources/io/skiffmq/codec/stream/corpus/} and kept
 * there in step by {@link StreamHostileCorpusTest}; also the seed corpus of the {@code streamFrames} fuzz target.
 */
final class StreamHostileInputs {
    record Input(String name, byte[] bytes) {
    }

    private StreamHostileInputs() {
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteBuf out = Unpooled.buffer();
        parts.forEach(out::writeBytes);
        return ByteBufUtil.getBytes(out);
    }

    /** The handshake a client sends, up to and including open. */
    static List<byte[]> handshake() {
        return List.of(
            StreamSamples.frame(new ConnectionCommand.PeerProperties(1, StreamSamples.map("product", "RabbitMQ Stream",
                "version", "1.11.0", "platform", "Java"))),
            StreamSamples.frame(new ConnectionCommand.SaslHandshake(2)),
            StreamSamples.frame(new ConnectionCommand.SaslAuthenticate(3, "PLAIN",
                Bytes.wrap("\0guest\0guest".getBytes(StandardCharsets.UTF_8)))),
            StreamSamples.frame(new ConnectionCommand.Tune(1_048_576, 60, true)),
            StreamSamples.frame(new ConnectionCommand.Open(4, "/")));
    }

    /** Every frame a client may send, each after the handshake: the inputs that must decode cleanly. */
    static List<byte[]> valid() {
        List<byte[]> frames = new ArrayList<>();
        for (StreamSamples.Sample s : StreamSamples.commands()) {
            if (CommandKey.accepts(Peer.CLIENT, s.command().wireKey(), s.command().version())) {
                frames.add(StreamSamples.frame(s.command()));
            }
        }
        frames.add(StreamSamples.publishV1(1, 1, 5));
        frames.add(StreamSamples.publishV2(2, 100, 5));
        frames.add(StreamSamples.credit(3, 10));
        frames.add(StreamSamples.storeOffset("app-1", "orders", 1_000));
        frames.add(StreamSamples.heartbeat());
        List<byte[]> valid = new ArrayList<>();
        byte[] handshake = concat(handshake());
        valid.add(handshake);
        for (byte[] frame : frames) {
            valid.add(concat(List.of(handshake, frame)));
        }
        return valid;
    }

    static List<Input> generate() {
        Random random = new Random(0x5552);
        List<Input> inputs = new ArrayList<>();
        List<byte[]> valid = valid();
        for (int i = 0; i < valid.size(); i++) {
            inputs.add(new Input(String.format("valid-%02d", i), valid.get(i)));
        }
        int handshake = valid.get(0).length;
        for (int i = 0; i < 40; i++) {
            byte[] base = pick(random, valid);
            inputs.add(new Input("truncated-" + i, Arrays.copyOf(base, handshake + random.nextInt(base.length
                - handshake + 1))));
        }
        for (int i = 0; i < 50; i++) {
            // the last frame's size lies: off by one, zero, under 4, 4 GB, past 8 KiB before open
            byte[] base = pick(random, valid).clone();
            int at = i % 5 == 0 ? 0 : lastFrameAt(base);
            int size = ByteBuffer.wrap(base, at, 4).getInt();
            int[] lies = {size + 1, size - 1, 0, 3, -1, random.nextInt(1 << 21), 8193, Integer.MAX_VALUE};
            ByteBuffer.wrap(base, at, 4).putInt(lies[i % lies.length]);
            inputs.add(new Input("lying-size-" + i, base));
        }
        for (int i = 0; i < 40; i++) {
            // keys around the defined ones, responses, versions 0 to 3
            byte[] base = pick(random, valid).clone();
            int at = lastFrameAt(base);
            int key = (i % 3 == 0 ? 0x8000 : 0) | (i % 2 == 0 ? random.nextInt(0x22) : random.nextInt(0x8000));
            ByteBuffer.wrap(base, at + 4, 4).putShort((short) key).putShort((short) random.nextInt(4));
            inputs.add(new Input("key-" + i, base));
        }
        for (int i = 0; i < 20; i++) {
            // what only a server sends, from a client
            byte[][] serverFrames = {StreamSamples.confirm(1, 1, 2), StreamSamples.error(1, 3),
                StreamSamples.deliver(1 + i % 2, 1, 5, StreamSamples.chunk(0, 2, 4)),
                StreamSamples.frame(new ManagementCommand.MetadataUpdate(ResponseCode.STREAM_NOT_AVAILABLE, "s")),
                StreamSamples.frame(new ConsumerCommand.ConsumerUpdate(1, 1, true)),
                StreamSamples.frame(new Response(CommandKey.SUBSCRIBE, 1, ResponseCode.OK))};
            inputs.add(new Input("wrong-end-" + i, concat(List.of(valid.get(0), serverFrames[i % serverFrames.length]))));
        }
        for (int i = 0; i < 80; i++) {
            byte[] base = pick(random, valid).clone();
            int from = lastFrameAt(base) + 8;
            for (int flips = 1 + random.nextInt(4); flips > 0 && from < base.length; flips--) {
                base[from + random.nextInt(base.length - from)] = (byte) random.nextInt(256);
            }
            inputs.add(new Input("flipped-" + i, base));
        }
        for (int i = 0; i < 80; i++) {
            // a length or count field, wherever it may be, set to a hostile value
            byte[] base = pick(random, valid).clone();
            int from = lastFrameAt(base) + 8;
            if (from + 4 > base.length) {
                from = handshake - 10;
            }
            int at = from + random.nextInt(base.length - from - 1);
            if (i % 2 == 0) {
                short[] shorts = {-1, -2, Short.MAX_VALUE, Short.MIN_VALUE, 0};
                ByteBuffer.wrap(base, at, 2).putShort(shorts[random.nextInt(shorts.length)]);
            } else if (at + 4 <= base.length) {
                int[] ints = {-1, -2, Integer.MAX_VALUE, Integer.MIN_VALUE, 1 << 20, 0};
                ByteBuffer.wrap(base, at, 4).putInt(ints[random.nextInt(ints.length)]);
            }
            inputs.add(new Input("length-" + i, base));
        }
        inputs.addAll(publishes(random, valid.get(0)));
        inputs.addAll(large(valid.get(0)));
        return inputs;
    }

    private static byte[] pick(Random random, List<byte[]> valid) {
        return valid.get(1 + random.nextInt(valid.size() - 1));
    }

    /** Where the last frame of a sequence of whole frames starts. */
    private static int lastFrameAt(byte[] frames) {
        int at = 0;
        while (true) {
            int next = at + 4 + ByteBuffer.wrap(frames, at, 4).getInt();
            if (next >= frames.length) {
                return at;
            }
            at = next;
        }
    }

    /** Publishes whose entries lie about their count, sizes, filter values and batches. */
    private static List<Input> publishes(Random random, byte[] handshake) {
        List<Input> inputs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            byte[] publish = i % 2 == 0 ? StreamSamples.publishV1(1, i, 4) : StreamSamples.publishV2(1, i, 4);
            int body = 8;
            switch (i % 4) {
                case 0 -> ByteBuffer.wrap(publish, body + 1, 4).putInt(i % 8 == 0 ? 3 : -1); // the count
                case 1 -> ByteBuffer.wrap(publish, body + 5 + 8, 2).putShort((short) (i % 8 == 1 ? -5 : 0x7fff));
                case 2 -> ByteBuffer.wrap(publish, body + 5 + 8, 4).putInt(random.nextInt()); // first size or type
                default -> publish[body + 5 + 8 + 2 + random.nextInt(4)] = (byte) 0x80; // a batch where none fits
            }
            inputs.add(new Input("publish-" + i, concat(List.of(handshake, publish))));
        }
        return inputs;
    }

    /** Big maps and lists, many frames, and a frame too large before open. */
    private static List<Input> large(byte[] handshake) {
        List<Input> inputs = new ArrayList<>();
        Map<String, String> wide = new LinkedHashMap<>();
        for (int i = 0; wide.size() < 2_000; i++) {
            wide.put("k" + i, i % 3 == 0 ? "" : "v");
        }
        inputs.add(new Input("map-wide", concat(List.of(handshake,
            StreamSamples.frame(new ManagementCommand.CreateStream(9, "s", wide))))));
        inputs.add(new Input("map-wide-before-open", StreamSamples.frame(new ConnectionCommand.PeerProperties(1, wide))));
        // 20,000 empty stream names: 2 bytes each, the cheapest items a client can send
        ByteBuf metadata = Unpooled.buffer().writeInt(0).writeShort(0x0f).writeShort(1).writeInt(9).writeInt(20_000);
        metadata.writeZero(40_000).setInt(0, metadata.readableBytes() - 4);
        inputs.add(new Input("list-of-empty-names", concat(List.of(handshake, ByteBufUtil.getBytes(metadata)))));
        List<byte[]> heartbeats = new ArrayList<>(List.of(handshake));
        for (int i = 0; i < 500; i++) {
            heartbeats.add(StreamSamples.heartbeat());
        }
        inputs.add(new Input("heartbeats", concat(heartbeats)));
        List<byte[]> credits = new ArrayList<>(List.of(handshake));
        for (int i = 0; i < 300; i++) {
            credits.add(StreamSamples.credit(i % 256, i));
        }
        inputs.add(new Input("credits", concat(credits)));
        inputs.add(new Input("publish-1000", concat(List.of(handshake, StreamSamples.publishV1(1, 0, 1_000)))));
        return inputs;
    }
}
