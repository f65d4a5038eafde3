package io.skiffmq.codec.amqp10;

/**
 * The type a field of a composite type [1.4] is declared with, as the encodings it may take (besides null, which
 * every field may be unless it is mandatory): what {@link CompositeShapes} checks before proton-j builds an object
 * whose setter would otherwise cast the value or reject null by throwing. Stateless.
 */
enum FieldType {
    STRING("string", FormatCode.STR8, FormatCode.STR32),
    SYMBOL("symbol", FormatCode.SYM8, FormatCode.SYM32),
    /** A {@code multiple="true"} symbol field [1.6.21]: one symbol, or an array of them. */
    SYMBOLS("symbol or array of symbols", FormatCode.SYM8, FormatCode.SYM32, FormatCode.ARRAY8, FormatCode.ARRAY32),
    BOOLEAN("boolean", FormatCode.BOOLEAN, FormatCode.BOOLEAN_TRUE, FormatCode.BOOLEAN_FALSE),
    UBYTE("ubyte", FormatCode.UBYTE),
    /** {@code sender-settle-mode} [2.8.2]: a ubyte of 0 to 2 (proton-j indexes its enum with it). */
    SND_SETTLE_MODE("sender-settle-mode", new int[] {FormatCode.UBYTE}, 2),
    /** {@code receiver-settle-mode} [2.8.3]: a ubyte of 0 or 1. */
    RCV_SETTLE_MODE("receiver-settle-mode", new int[] {FormatCode.UBYTE}, 1),
    /** {@code sasl-code} [5.3.3.6]: a ubyte of 0 to 4. */
    SASL_CODE("sasl-code", new int[] {FormatCode.UBYTE}, 4),
    USHORT("ushort", FormatCode.USHORT),
    UINT("uint", FormatCode.UINT, FormatCode.SMALLUINT, FormatCode.UINT0),
    ULONG("ulong", FormatCode.ULONG, FormatCode.SMALLULONG, FormatCode.ULONG0),
    TIMESTAMP("timestamp", FormatCode.TIMESTAMP),
    BINARY("binary", FormatCode.VBIN8, FormatCode.VBIN32),
    MAP("map", FormatCode.MAP8, FormatCode.MAP32),
    LIST("list", FormatCode.LIST0, FormatCode.LIST8, FormatCode.LIST32),
    /** A message-id or correlation-id [3.2.11]: ulong, uuid, binary or string. */
    MESSAGE_ID("message-id", FormatCode.ULONG, FormatCode.SMALLULONG, FormatCode.ULONG0, FormatCode.UUID,
        FormatCode.VBIN8, FormatCode.VBIN32, FormatCode.STR8, FormatCode.STR32),
    /** A {@code source} [3.5.3]. */
    SOURCE("source", 0x28),
    /** A {@code target} [3.5.4] or a transaction {@code coordinator} [4.5.1]. */
    TARGET("target", 0x29, 0x30),
    /** An {@code error} [2.8.14]. */
    ERROR("error", 0x1d),
    /** An outcome [3.4]: accepted, rejected, released or modified; or a transaction's declared [4.5.6]. */
    OUTCOME("outcome", 0x24, 0x25, 0x26, 0x27, 0x33),
    /** A delivery state [3.4]: received or an outcome (declared included), or a transactional state [4.5.8]. */
    STATE("delivery-state", 0x23, 0x24, 0x25, 0x26, 0x27, 0x33, 0x34),
    /** Any value: its own shape is checked wherever it is described. */
    ANY("any value");

    private final String name;
    /** The largest value of an enumerated ubyte; -1 for other types. */
    private final int max;
    /** Format codes, or for the described types above their descriptor codes. */
    private final int[] codes;

    FieldType(String name, int... codes) {
        this(name, codes, -1);
    }

    FieldType(String name, int[] codes, int max) {
        this.name = name;
        this.max = max;
        this.codes = codes;
    }

    /** The largest value an enumerated ubyte may take, or -1 when the type is no enumeration. */
    int max() {
        return max;
    }

    /** True for the types whose values are described by one of {@link #codes}. */
    boolean described() {
        return this == SOURCE || this == TARGET || this == ERROR || this == OUTCOME || this == STATE;
    }

    /** True when a value with format code (or, for {@link #described} types, descriptor code) {@code code} fits. */
    boolean accepts(long code) {
        if (this == ANY) {
            return true;
        }
        for (int c : codes) {
            if (c == code) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return name;
    }
}
