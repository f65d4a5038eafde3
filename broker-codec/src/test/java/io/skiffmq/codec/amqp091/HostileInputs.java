package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Hostile AMQP 0-9-1 inputs, generated deterministically from valid frames: truncations, lying sizes, bad end
 * octets, unknown frame types and methods, byte flips, huge and deeply nested tables, bad property flags. Used by
 * {@link Amqp091HostileCorpusTest} and, written to files, as the seed corpus of the {@code frames091} fuzz target.
 */
final class HostileInputs {
    record Input(String name, byte[] bytes) {
    }

    private HostileInputs() {
    }

    static byte[] frame(int type, int channel, byte[] payload) {
        return ByteBuffer.allocate(8 + payload.length).put((byte) type).putShort((short) channel).putInt(payload.length)
            .put(payload).put((byte) 0xce).array();
    }

    private static byte[] methodFrame(int channel, Method m) {
        ByteBuf out = Unpooled.buffer();
        Amqp091FrameWriter.writeMethod(out, channel, m);
        return ByteBufUtil.getBytes(out);
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteBuf out = Unpooled.buffer();
        parts.forEach(out::writeBytes);
        return ByteBufUtil.getBytes(out);
    }

    /** A publish with properties and a two-frame body, as a client sends it. */
    static byte[] publish() {
        ByteBuf out = Unpooled.buffer();
        out.writeBytes(Amqp091ProtocolHeader.bytes());
        Amqp091FrameWriter.writeMethod(out, 1, new BasicMethod.Publish("amq.topic", "a.b", true, false));
        Amqp091FrameWriter.writeContentHeader(out, 1, 60, 10, BasicPropertiesTest.all());
        Amqp091FrameWriter.writeBody(out, 1, Unpooled.wrappedBuffer("0123456789".getBytes()), 14);
        Amqp091FrameWriter.writeHeartbeat(out);
        return ByteBufUtil.getBytes(out);
    }

    /** Valid inputs: every sample method as a frame, and a publish. */
    static List<byte[]> valid() {
        List<byte[]> valid = new ArrayList<>();
        for (MethodSamples.Sample s : MethodSamples.all()) {
            valid.add(methodFrame(s.ours() instanceof ConnectionMethod ? 0 : 3, s.ours()));
        }
        valid.add(publish());
        return valid;
    }

    static List<Input> generate() {
        Random random = new Random(0x091);
        List<Input> inputs = new ArrayList<>();
        List<byte[]> valid = valid();
        for (int i = 0; i < valid.size(); i++) {
            inputs.add(new Input("valid-" + i, valid.get(i)));
        }
        byte[] publish = publish();
        for (int i = 0; i < 60; i++) {
            byte[] base = valid.get(random.nextInt(valid.size()));
            inputs.add(new Input("truncated-" + i, Arrays.copyOf(base, random.nextInt(base.length))));
        }
        for (int i = 0; i < 60; i++) {
            // a size field that lies: small, large, huge, off by one; the payload stays as it was
            byte[] base = valid.get(random.nextInt(valid.size())).clone();
            int at = base == publish || base[0] == 'A' ? 8 : 0;
            int size = ByteBuffer.wrap(base, at + 3, 4).getInt();
            int[] lies = {size + 1, size - 1, 0, -1, Integer.MAX_VALUE, random.nextInt(1 << 20), size + 8};
            ByteBuffer.wrap(base, at + 3, 4).putInt(lies[i % lies.length]);
            inputs.add(new Input("lying-size-" + i, base));
        }
        for (int i = 0; i < 30; i++) {
            byte[] base = valid.get(random.nextInt(valid.size() - 1)).clone();
            base[base.length - 1] = (byte) random.nextInt(0xce);
            inputs.add(new Input("bad-end-" + i, base));
        }
        for (int i = 0; i < 30; i++) {
            byte[] base = valid.get(random.nextInt(valid.size() - 1)).clone();
            base[0] = (byte) (4 + random.nextInt(250));
            inputs.add(new Input("frame-type-" + i, base));
        }
        for (int i = 0; i < 40; i++) {
            // class and method ids around the real ones and beyond
            byte[] base = valid.get(random.nextInt(valid.size() - 1)).clone();
            int classId = i % 2 == 0 ? random.nextInt(100) : random.nextInt(65_536);
            base[7] = (byte) (classId >> 8);
            base[8] = (byte) classId;
            base[10] = (byte) random.nextInt(130);
            inputs.add(new Input("method-id-" + i, base));
        }
        for (int i = 0; i < 120; i++) {
            byte[] base = valid.get(random.nextInt(valid.size())).clone();
            for (int flips = 1 + random.nextInt(6); flips > 0; flips--) {
                base[random.nextInt(base.length)] = (byte) random.nextInt(256);
            }
            inputs.add(new Input("flipped-" + i, base));
        }
        for (int i = 0; i < 20; i++) {
            byte[] base = publish.clone();
            int header = publishHeaderAt(publish);
            // property flags: random, including bits 1 and 0 that class basic does not define
            base[header + 7 + 12] = (byte) random.nextInt(256);
            base[header + 7 + 13] = (byte) random.nextInt(256);
            inputs.add(new Input("property-flags-" + i, base));
        }
        for (int i = 0; i < 10; i++) {
            // heartbeats on a channel, or carrying bytes, after a valid method
            byte[] heartbeat = i % 2 == 0 ? frame(8, 1 + random.nextInt(65_535), new byte[0])
                : frame(8, 0, new byte[i]);
            inputs.add(new Input("heartbeat-" + i, concat(List.of(valid.get(i), heartbeat))));
        }
        inputs.addAll(tables(random));
        return inputs;
    }

    private static int publishHeaderAt(byte[] publish) {
        int at = 8;
        return at + 8 + ByteBuffer.wrap(publish, at + 3, 4).getInt();
    }

    /** Tables inside exchange.declare: huge, lying about their length, nested beyond the limit. */
    private static List<Input> tables(Random random) {
        List<Input> inputs = new ArrayList<>();
        Map<String, Object> wide = new LinkedHashMap<>();
        for (int i = 0; wide.size() < 5000; i++) {
            wide.put("k" + i, i % 3 == 0 ? null : i);
        }
        inputs.add(new Input("table-wide", methodFrame(1, declare(wide))));
        // 40,000 void fields with empty names: 2 bytes each, the cheapest entries a peer can send
        ByteBuf voids = Unpooled.buffer();
        for (int i = 0; i < 40_000; i++) {
            voids.writeByte(0).writeByte('V');
        }
        inputs.add(new Input("table-voids", declareRaw(ByteBufUtil.getBytes(voids))));
        for (int depth : new int[] {63, 64, 65, 1000, 15_000}) {
            ByteBuf nested = Unpooled.buffer();
            nest(nested, depth);
            byte[] table = ByteBufUtil.getBytes(nested);
            inputs.add(new Input("table-nested-" + depth, declareRaw(Arrays.copyOfRange(table, 4, table.length))));
        }
        for (int i = 0; i < 20; i++) {
            byte[] frame = methodFrame(1, declare(Map.of("x-max-length", 10, "k", "v")));
            int tableAt = frame.length - 1 - tableLength(frame) - 4;
            ByteBuffer.wrap(frame, tableAt, 4).putInt(i % 2 == 0 ? random.nextInt() : tableLength(frame) + i);
            inputs.add(new Input("table-length-" + i, frame));
        }
        return inputs;
    }

    private static int tableLength(byte[] frame) {
        // the declare frames built here end with the table: search back for its 4-byte length
        for (int at = 11; at + 4 < frame.length; at++) {
            if (ByteBuffer.wrap(frame, at, 4).getInt() == frame.length - 1 - at - 4) {
                return frame.length - 1 - at - 4;
            }
        }
        throw new IllegalStateException("no table");
    }

    /** A table nested {@code depth} deep: each level holds one field, {@code n}, the next table. */
    private static void nest(ByteBuf out, int depth) {
        for (int level = 0; level < depth; level++) {
            out.writeInt(7 * (depth - level)).writeByte(1).writeByte('n').writeByte('F');
        }
        out.writeInt(0);
    }

    private static Method declare(Map<String, Object> arguments) {
        return new ExchangeMethod.Declare("x", "topic", false, true, false, false, false, arguments);
    }

    /** An exchange.declare frame whose arguments table holds {@code fields} as they are (the codec writes values). */
    private static byte[] declareRaw(byte[] fields) {
        ByteBuf payload = Unpooled.buffer();
        payload.writeShort(40).writeShort(10).writeShort(0).writeByte(1).writeByte('x').writeByte(5)
            .writeBytes("topic".getBytes()).writeByte(2).writeInt(fields.length).writeBytes(fields);
        return frame(1, 1, ByteBufUtil.getBytes(payload));
    }
}
