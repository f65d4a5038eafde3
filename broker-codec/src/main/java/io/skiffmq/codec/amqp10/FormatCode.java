package io.skiffmq.codec.amqp10;

/**
 * AMQP 1.0 format codes [1.6]. The high nibble of a code gives its width category [1.2]: 0x4 empty,
 * 0x5 one byte, 0x6 two, 0x7 four, 0x8 eight, 0x9 sixteen, 0xa/0xb variable with a 1/4-byte size,
 * 0xc/0xd compound (list, map) and 0xe/0xf array, each with a 1/4-byte size and count.
 */
public final class FormatCode {
    public static final int DESCRIBED = 0x00;
    public static final int NULL = 0x40;
    public static final int BOOLEAN_TRUE = 0x41;
    public static final int BOOLEAN_FALSE = 0x42;
    public static final int UINT0 = 0x43;
    public static final int ULONG0 = 0x44;
    public static final int LIST0 = 0x45;
    public static final int UBYTE = 0x50;
    public static final int BYTE = 0x51;
    public static final int SMALLUINT = 0x52;
    public static final int SMALLULONG = 0x53;
    public static final int SMALLINT = 0x54;
    public static final int SMALLLONG = 0x55;
    public static final int BOOLEAN = 0x56;
    public static final int USHORT = 0x60;
    public static final int SHORT = 0x61;
    public static final int UINT = 0x70;
    public static final int INT = 0x71;
    public static final int FLOAT = 0x72;
    public static final int CHAR = 0x73;
    public static final int DECIMAL32 = 0x74;
    public static final int ULONG = 0x80;
    public static final int LONG = 0x81;
    public static final int DOUBLE = 0x82;
    public static final int TIMESTAMP = 0x83;
    public static final int DECIMAL64 = 0x84;
    public static final int DECIMAL128 = 0x94;
    public static final int UUID = 0x98;
    public static final int VBIN8 = 0xa0;
    public static final int STR8 = 0xa1;
    public static final int SYM8 = 0xa3;
    public static final int VBIN32 = 0xb0;
    public static final int STR32 = 0xb1;
    public static final int SYM32 = 0xb3;
    public static final int LIST8 = 0xc0;
    public static final int MAP8 = 0xc1;
    public static final int LIST32 = 0xd0;
    public static final int MAP32 = 0xd1;
    public static final int ARRAY8 = 0xe0;
    public static final int ARRAY32 = 0xf0;

    /** Width of a fixed-width value's data, -1 for variable, compound and array codes, -2 for unknown codes. */
    private static final byte[] FIXED_WIDTH = new byte[256];

    static {
        java.util.Arrays.fill(FIXED_WIDTH, (byte) -2);
        for (int c : new int[] {NULL, BOOLEAN_TRUE, BOOLEAN_FALSE, UINT0, ULONG0, LIST0}) {
            FIXED_WIDTH[c] = 0;
        }
        for (int c : new int[] {UBYTE, BYTE, SMALLUINT, SMALLULONG, SMALLINT, SMALLLONG, BOOLEAN}) {
            FIXED_WIDTH[c] = 1;
        }
        FIXED_WIDTH[USHORT] = 2;
        FIXED_WIDTH[SHORT] = 2;
        for (int c : new int[] {UINT, INT, FLOAT, CHAR, DECIMAL32}) {
            FIXED_WIDTH[c] = 4;
        }
        for (int c : new int[] {ULONG, LONG, DOUBLE, TIMESTAMP, DECIMAL64}) {
            FIXED_WIDTH[c] = 8;
        }
        FIXED_WIDTH[DECIMAL128] = 16;
        FIXED_WIDTH[UUID] = 16;
        for (int c : new int[] {VBIN8, STR8, SYM8, VBIN32, STR32, SYM32, LIST8, MAP8, LIST32, MAP32, ARRAY8, ARRAY32}) {
            FIXED_WIDTH[c] = -1;
        }
    }

    private FormatCode() {
    }

    /** Data width of a fixed-width code; -1 for codes with a size field; -2 for codes AMQP does not define. */
    static int fixedWidth(int code) {
        return FIXED_WIDTH[code];
    }

    static boolean isList(int code) {
        return code == LIST0 || code == LIST8 || code == LIST32;
    }

    static boolean isMap(int code) {
        return code == MAP8 || code == MAP32;
    }

    static boolean isArray(int code) {
        return code == ARRAY8 || code == ARRAY32;
    }

    /**
     * For a code with a size field (0xa0 and above): true when the size (and count) take one byte. The
     * categories with one-byte sizes are 0xa, 0xc and 0xe, those with four-byte sizes 0xb, 0xd and 0xf [1.2].
     */
    static boolean hasOneByteSize(int code) {
        return (code & 0x10) == 0;
    }
}
