package io.skiffmq.cluster;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * The few DER (X.690) encodings a self-signed X.509 certificate needs, so that {@link SecretTls} can make one with
 * the JDK alone. Each method returns one whole TLV. Stateless.
 */
final class Der {
    private static final int INTEGER = 0x02;
    private static final int BIT_STRING = 0x03;
    private static final int OCTET_STRING = 0x04;
    private static final int OID = 0x06;
    private static final int UTF8_STRING = 0x0c;
    private static final int UTC_TIME = 0x17;
    private static final int GENERALIZED_TIME = 0x18;
    private static final int SEQUENCE = 0x30;
    private static final int SET = 0x31;

    private Der() {
    }

    static byte[] sequence(byte[]... parts) {
        return tlv(SEQUENCE, concat(parts));
    }

    static byte[] set(byte[]... parts) {
        return tlv(SET, concat(parts));
    }

    /** {@code [n] EXPLICIT}: a constructed context-specific tag around one value. */
    static byte[] explicit(int n, byte[] value) {
        return tlv(0xa0 | n, value);
    }

    static byte[] integer(BigInteger value) {
        return tlv(INTEGER, value.toByteArray());
    }

    static byte[] octetString(byte[] value) {
        return tlv(OCTET_STRING, value);
    }

    /** A BIT STRING of whole bytes (no unused bits). */
    static byte[] bitString(byte[] value) {
        return tlv(BIT_STRING, concat(new byte[] {0}, value));
    }

    static byte[] utf8(String value) {
        return tlv(UTF8_STRING, value.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code YYMMDDHHMMSSZ}. */
    static byte[] utcTime(String value) {
        return tlv(UTC_TIME, value.getBytes(StandardCharsets.US_ASCII));
    }

    /** {@code YYYYMMDDHHMMSSZ}. */
    static byte[] generalizedTime(String value) {
        return tlv(GENERALIZED_TIME, value.getBytes(StandardCharsets.US_ASCII));
    }

    /** An OBJECT IDENTIFIER from its dotted form; arcs may be larger than a long (the {@code 2.25} UUID arc). */
    static byte[] oid(String dotted) {
        String[] arcs = dotted.split("\\.");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        base128(out, BigInteger.valueOf(Integer.parseInt(arcs[0]) * 40L).add(new BigInteger(arcs[1])));
        for (int i = 2; i < arcs.length; i++) {
            base128(out, new BigInteger(arcs[i]));
        }
        return tlv(OID, out.toByteArray());
    }

    private static void base128(ByteArrayOutputStream out, BigInteger value) {
        int groups = Math.max(1, (value.bitLength() + 6) / 7);
        for (int g = groups - 1; g >= 0; g--) {
            int seven = value.shiftRight(7 * g).intValue() & 0x7f;
            out.write(g == 0 ? seven : seven | 0x80);
        }
    }

    static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
        out.write(tag);
        int length = value.length;
        if (length < 0x80) {
            out.write(length);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(length >>> (8 * i));
            }
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
