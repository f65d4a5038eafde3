package io.skiffmq.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.amqp091.Amqp091FrameWriter;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp091.ChannelMethod;
import io.skiffmq.codec.amqp091.ConnectionMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.QueueMethod;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Makes the AMQP 0-9-1 hostile corpus ({@code src/test/resources/corpora/amqp091/}, its README says how): one valid
 * client conversation after the protocol header ({@code start-ok} PLAIN guest, {@code tune-ok}, {@code open},
 * {@code channel.open}, {@code queue.declare}, {@code basic.publish} with a content header and a body,
 * {@code connection.close}), mutated one way per file by a seeded {@link Random}: bit flips, truncations, lying and
 * huge frame sizes, wrong frame-end octets, unknown frame types, bad class and method ids, wrong channels, lying
 * body sizes, broken and deeply nested field tables, frames out of order. Deterministic: the same seed makes the
 * same files. Run {@link #main} to write them; {@code Amqp091CorpusReplayTest} checks the files are what this makes.
 */
final class Amqp091Corpus {
    /** The seed: change it and the corpus changes. */
    static final long SEED = 0x5_4b1ff_0091L;
    /** Where the corpus lives, from the repository root. */
    static final String DIRECTORY = "broker-server/src/test/resources/corpora/amqp091";

    private static final String[] FRAME_NAMES = {"start-ok", "tune-ok", "open", "channel-open", "queue-declare",
        "publish", "content-header", "body", "close"};
    private static final int START_OK = 0;
    private static final int CONTENT_HEADER = 6;
    private static final int BODY = 7;
    /** Offset of start-ok's client-properties table length in its frame: frame header 7, class and method 4. */
    private static final int TABLE_LENGTH_AT = 11;

    record Input(String name, byte[] bytes) {
    }

    private Amqp091Corpus() {
    }

    /** The valid conversation, frame by frame (no protocol header). */
    static List<byte[]> conversation() {
        Map<String, Object> capabilities = new LinkedHashMap<>();
        capabilities.put("publisher_confirms", true);
        capabilities.put("consumer_cancel_notify", true);
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("product", "corpus");
        properties.put("capabilities", capabilities);
        List<byte[]> frames = new ArrayList<>();
        frames.add(method(0, new ConnectionMethod.StartOk(properties, "PLAIN",
            Bytes.wrap("\0guest\0guest".getBytes(StandardCharsets.UTF_8)), "en_US")));
        frames.add(method(0, new ConnectionMethod.TuneOk(2047, 131_072, 0)));
        frames.add(method(0, new ConnectionMethod.Open("/")));
        frames.add(method(1, new ChannelMethod.Open()));
        frames.add(method(1, new QueueMethod.Declare("corpus", false, false, false, true, false,
            Map.of("x-max-length", 10))));
        frames.add(method(1, new BasicMethod.Publish("", "corpus", false, false)));
        byte[] body = "hostile corpus body".getBytes(StandardCharsets.UTF_8);
        ByteBuf header = Unpooled.buffer();
        Amqp091FrameWriter.writeContentHeader(header, 1, 60, body.length, new BasicProperties("text/plain", null,
            Map.of("k", "v"), 2, 1, "c", null, null, "m", null, null, null, null, null));
        frames.add(bytes(header));
        ByteBuf bodyFrame = Unpooled.buffer();
        Amqp091FrameWriter.writeBody(bodyFrame, 1, Unpooled.wrappedBuffer(body), 131_072);
        frames.add(bytes(bodyFrame));
        frames.add(method(0, new ConnectionMethod.Close(200, "bye", 0, 0)));
        return frames;
    }

    /** The corpus, in order: the valid conversation first, then each mutation. */
    static List<Input> generate() {
        Random random = new Random(SEED);
        List<byte[]> valid = conversation();
        List<Input> inputs = new ArrayList<>();
        inputs.add(new Input("000-valid", concat(valid)));
        for (int frame = 0; frame < valid.size(); frame++) {
            for (int i = 0; i < 8; i++) {
                byte[] mutated = valid.get(frame).clone();
                int flips = 1 + random.nextInt(4);
                for (int f = 0; f < flips; f++) {
                    int bit = random.nextInt(mutated.length * 8);
                    mutated[bit / 8] ^= (byte) (1 << (bit % 8));
                }
                add(inputs, "flip", frame, with(valid, frame, mutated));
            }
            for (int i = 0; i < 3; i++) {
                byte[] upTo = concat(valid.subList(0, frame + 1));
                int before = upTo.length - valid.get(frame).length;
                add(inputs, "truncate", frame,
                    Arrays.copyOf(upTo, before + random.nextInt(valid.get(frame).length)));
            }
            long payload = valid.get(frame).length - 8;
            for (long size : new long[] {0, payload - 1, payload + 1, 0xffff_ffffL, 0x7fff_ffffL, 1 << 20}) {
                byte[] mutated = valid.get(frame).clone();
                ByteBuffer.wrap(mutated).putInt(3, (int) size);
                add(inputs, "size-" + Long.toHexString(size), frame, with(valid, frame, mutated));
            }
            for (int i = 0; i < 2; i++) {
                byte[] mutated = valid.get(frame).clone();
                int end = random.nextInt(256);
                mutated[mutated.length - 1] = (byte) (end == 0xce ? 0 : end);
                add(inputs, "frame-end", frame, with(valid, frame, mutated));
            }
            for (int type : new int[] {0, 4, 8, 9, 255}) {
                byte[] mutated = valid.get(frame).clone();
                mutated[0] = (byte) type;
                add(inputs, "type-" + type, frame, with(valid, frame, mutated));
            }
            for (int channel : new int[] {0, 2, 2048, 65535}) {
                byte[] mutated = valid.get(frame).clone();
                ByteBuffer.wrap(mutated).putShort(1, (short) channel);
                add(inputs, "channel-" + channel, frame, with(valid, frame, mutated));
            }
            if (valid.get(frame)[0] == 1) {
                int[] classes = {10, 20, 40, 50, 60, 85, 90, 999};
                for (int i = 0; i < 4; i++) {
                    byte[] mutated = valid.get(frame).clone();
                    ByteBuffer.wrap(mutated).putShort(7, (short) classes[random.nextInt(classes.length)])
                        .putShort(9, (short) random.nextInt(121));
                    add(inputs, "method-id", frame, with(valid, frame, mutated));
                }
            }
        }
        for (long bodySize : new long[] {0, 5, 100, 1L << 32, 1L << 40, Long.MAX_VALUE, -1}) {
            byte[] mutated = valid.get(CONTENT_HEADER).clone();
            ByteBuffer.wrap(mutated).putLong(11, bodySize);
            add(inputs, "body-size-" + Long.toHexString(bodySize), CONTENT_HEADER,
                with(valid, CONTENT_HEADER, mutated));
        }
        tables(inputs, valid, random);
        order(inputs, valid);
        return inputs;
    }

    /** start-ok's client-properties table: lying lengths, unknown field types, a table nested 1,000 deep. */
    private static void tables(List<Input> inputs, List<byte[]> valid, Random random) {
        byte[] startOk = valid.get(START_OK);
        int tableLength = ByteBuffer.wrap(startOk).getInt(TABLE_LENGTH_AT);
        for (int length : new int[] {0, 1, tableLength - 3, tableLength + 5, 0x7fff_ffff, -1}) {
            byte[] mutated = startOk.clone();
            ByteBuffer.wrap(mutated).putInt(TABLE_LENGTH_AT, length);
            add(inputs, "table-length-" + Integer.toHexString(length), START_OK, with(valid, START_OK, mutated));
        }
        // the first field: name length, name, then its type octet
        int typeAt = TABLE_LENGTH_AT + 4 + 1 + startOk[TABLE_LENGTH_AT + 4];
        for (int i = 0; i < 8; i++) {
            byte[] mutated = startOk.clone();
            mutated[typeAt] = (byte) (0x20 + random.nextInt(0x5f));
            add(inputs, "table-type", START_OK, with(valid, START_OK, mutated));
        }
        for (int i = 0; i < 4; i++) {
            byte[] mutated = startOk.clone();
            mutated[typeAt + 1 + random.nextInt(4)] = (byte) 0xff; // the string value's length, lying
            add(inputs, "table-string-length", START_OK, with(valid, START_OK, mutated));
        }
        ByteBuf nested = Unpooled.buffer();
        nested.writeShort(10).writeShort(11);
        ByteBuf table = Unpooled.buffer();
        for (int depth = 0; depth < 1000; depth++) {
            table.writeByte(1).writeByte('n').writeByte('F'); // a field "n" holding a table…
            table.writeInt(0);                                 // …whose length is patched below
        }
        for (int depth = 999; depth >= 0; depth--) {
            table.setInt(depth * 7 + 3, table.writerIndex() - (depth * 7 + 7));
        }
        nested.writeInt(table.readableBytes()).writeBytes(table);
        table.release();
        nested.writeByte(5).writeBytes("PLAIN".getBytes(StandardCharsets.US_ASCII));
        nested.writeInt(12).writeBytes("\0guest\0guest".getBytes(StandardCharsets.US_ASCII));
        nested.writeByte(5).writeBytes("en_US".getBytes(StandardCharsets.US_ASCII));
        add(inputs, "table-nested-1000", START_OK, with(valid, START_OK, frame(1, 0, bytes(nested))));
    }

    /** Frames in the wrong order or place. */
    private static void order(List<Input> inputs, List<byte[]> valid) {
        List<byte[]> headerFirst = new ArrayList<>(valid);
        headerFirst.add(5, headerFirst.remove(CONTENT_HEADER));
        add(inputs, "order-header-before-publish", CONTENT_HEADER, concat(headerFirst));
        List<byte[]> noHeader = new ArrayList<>(valid);
        noHeader.remove(CONTENT_HEADER);
        add(inputs, "order-body-without-header", BODY, concat(noHeader));
        List<byte[]> twice = new ArrayList<>(valid);
        twice.add(6, valid.get(5));
        add(inputs, "order-publish-twice", 5, concat(twice));
        List<byte[]> openFirst = new ArrayList<>(valid);
        openFirst.add(0, openFirst.remove(2));
        add(inputs, "order-open-before-start-ok", 2, concat(openFirst));
        List<byte[]> channelFirst = new ArrayList<>(valid);
        channelFirst.add(1, channelFirst.remove(3));
        add(inputs, "order-channel-before-tune-ok", 3, concat(channelFirst));
        List<byte[]> heartbeat = new ArrayList<>(valid);
        heartbeat.add(4, frame(8, 1, new byte[0]));
        add(inputs, "order-heartbeat-on-channel-1", 4, concat(heartbeat));
    }

    private static void add(List<Input> inputs, String mutation, int frame, byte[] bytes) {
        inputs.add(new Input(String.format("%03d-%s-%s", inputs.size(), FRAME_NAMES[frame], mutation), bytes));
    }

    private static byte[] with(List<byte[]> frames, int index, byte[] replacement) {
        List<byte[]> copy = new ArrayList<>(frames);
        copy.set(index, replacement);
        return concat(copy);
    }

    private static byte[] method(int channel, Method method) {
        ByteBuf out = Unpooled.buffer();
        Amqp091FrameWriter.writeMethod(out, channel, method);
        return bytes(out);
    }

    private static byte[] frame(int type, int channel, byte[] payload) {
        return ByteBuffer.allocate(8 + payload.length).put((byte) type).putShort((short) channel)
            .putInt(payload.length).put(payload).put((byte) 0xce).array();
    }

    private static byte[] bytes(ByteBuf buf) {
        try {
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    private static byte[] concat(List<byte[]> parts) {
        int length = parts.stream().mapToInt(p -> p.length).sum();
        ByteBuffer out = ByteBuffer.allocate(length);
        parts.forEach(out::put);
        return out.array();
    }

    /** Writes the corpus into {@code args[0]} (default {@link #DIRECTORY}), replacing its {@code .bin} files. */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : DIRECTORY);
        Files.createDirectories(dir);
        try (var old = Files.list(dir)) {
            for (Path file : old.filter(p -> p.toString().endsWith(".bin")).toList()) {
                Files.delete(file);
            }
        }
        for (Input input : generate()) {
            Files.write(dir.resolve(input.name() + ".bin"), input.bytes());
        }
    }
}
