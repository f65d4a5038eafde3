package io.skiffmq.codec.testing;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * Hand-built AMQP 1.0 encodings for tests, each a byte array, so a test states exactly which encoding it
 * means (1- or 2-byte booleans, list0/list8/list32, numeric or symbolic descriptors…).
 */
public final class Amqp {
    private Amqp() {
    }

    /** Bytes from hex digits; spaces are ignored. */
    public static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    public static String hex(byte[] bytes) {
        return HexFormat.ofDelimiter(" ").formatHex(bytes);
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    /** {@code 0x00 0x53 code value}: small ulong descriptor. */
    public static byte[] described(int code, byte[] value) {
        return concat(new byte[] {0x00, 0x53, (byte) code}, value);
    }

    /** {@code 0x00 0x80 <8 bytes> value}: the same descriptor as a full ulong. */
    public static byte[] describedLong(int code, byte[] value) {
        return concat(new byte[] {0x00, (byte) 0x80}, ByteBuffer.allocate(8).putLong(code).array(), value);
    }

    /** {@code 0x00 sym8 value}: a symbolic descriptor. */
    public static byte[] describedSymbol(String symbol, byte[] value) {
        return concat(new byte[] {0x00}, sym8(symbol), value);
    }

    public static byte[] nul() {
        return new byte[] {0x40};
    }

    /** {@code 0x41}/{@code 0x42}: one-byte boolean. */
    public static byte[] bool1(boolean value) {
        return new byte[] {(byte) (value ? 0x41 : 0x42)};
    }

    /** {@code 0x56 0x01}/{@code 0x56 0x00}: two-byte boolean. */
    public static byte[] bool2(boolean value) {
        return new byte[] {0x56, (byte) (value ? 1 : 0)};
    }

    public static byte[] ubyte(int value) {
        return new byte[] {0x50, (byte) value};
    }

    public static byte[] uint(long value) {
        if (value == 0) {
            return new byte[] {0x43};
        }
        if (value < 256) {
            return new byte[] {0x52, (byte) value};
        }
        return concat(new byte[] {0x70}, ByteBuffer.allocate(4).putInt((int) value).array());
    }

    /** A uint always in its 5-byte form. */
    public static byte[] uint32(long value) {
        return concat(new byte[] {0x70}, ByteBuffer.allocate(4).putInt((int) value).array());
    }

    public static byte[] ulong(long value) {
        return concat(new byte[] {(byte) 0x80}, ByteBuffer.allocate(8).putLong(value).array());
    }

    public static byte[] smallulong(int value) {
        return new byte[] {0x53, (byte) value};
    }

    public static byte[] int32(int value) {
        return concat(new byte[] {0x71}, ByteBuffer.allocate(4).putInt(value).array());
    }

    public static byte[] long64(long value) {
        return concat(new byte[] {(byte) 0x81}, ByteBuffer.allocate(8).putLong(value).array());
    }

    public static byte[] timestamp(long millis) {
        return concat(new byte[] {(byte) 0x83}, ByteBuffer.allocate(8).putLong(millis).array());
    }

    public static byte[] str8(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) 0xa1, (byte) utf8.length}, utf8);
    }

    public static byte[] str32(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) 0xb1}, ByteBuffer.allocate(4).putInt(utf8.length).array(), utf8);
    }

    public static byte[] sym8(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) 0xa3, (byte) utf8.length}, utf8);
    }

    public static byte[] sym32(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) 0xb3}, ByteBuffer.allocate(4).putInt(utf8.length).array(), utf8);
    }

    public static byte[] vbin8(byte[] value) {
        return concat(new byte[] {(byte) 0xa0, (byte) value.length}, value);
    }

    public static byte[] vbin32(byte[] value) {
        return concat(new byte[] {(byte) 0xb0}, ByteBuffer.allocate(4).putInt(value.length).array(), value);
    }

    public static byte[] list0() {
        return new byte[] {0x45};
    }

    public static byte[] list8(byte[]... elements) {
        return compound8(0xc0, elements);
    }

    public static byte[] list32(byte[]... elements) {
        return compound32(0xd0, elements);
    }

    /** A map8 of alternating keys and values. */
    public static byte[] map8(byte[]... keysAndValues) {
        return compound8(0xc1, keysAndValues);
    }

    public static byte[] map32(byte[]... keysAndValues) {
        return compound32(0xd1, keysAndValues);
    }

    private static byte[] compound8(int code, byte[]... elements) {
        byte[] content = concat(elements);
        return concat(new byte[] {(byte) code, (byte) (content.length + 1), (byte) elements.length}, content);
    }

    private static byte[] compound32(int code, byte[]... elements) {
        byte[] content = concat(elements);
        return concat(new byte[] {(byte) code}, ByteBuffer.allocate(8).putInt(content.length + 4)
            .putInt(elements.length).array(), content);
    }
}
