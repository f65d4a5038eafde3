package io.skiffmq.codec;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * An immutable byte string with value equality: the protocol-neutral form of binary values (AMQP 1.0
 * {@code binary}, AMQP 0-9-1 byte arrays and long strings that are not UTF-8). Immutable; safe to share.
 */
public final class Bytes {
    private final byte[] bytes;

    private Bytes(byte[] bytes) {
        this.bytes = bytes;
    }

    /** Wraps {@code bytes} without copying: the caller must not change them afterwards. */
    public static Bytes wrap(byte[] bytes) {
        return new Bytes(bytes);
    }

    public int length() {
        return bytes.length;
    }

    /** A copy of the bytes. */
    public byte[] toArray() {
        return bytes.clone();
    }

    /** The bytes themselves, not a copy: read them, never change them. */
    public byte[] array() {
        return bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Bytes b && Arrays.equals(bytes, b.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "0x" + HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, 64)) + (bytes.length > 64 ? "…" : "");
    }
}
