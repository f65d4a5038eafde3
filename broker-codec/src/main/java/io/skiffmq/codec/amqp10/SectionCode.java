package io.skiffmq.codec.amqp10;

/**
 * Descriptors of the message sections [3.2], numeric ({@code 0x00000000:0x00000070}…) and symbolic
 * ({@code amqp:header:list}…), and the order they must appear in.
 */
public final class SectionCode {
    public static final int HEADER = 0x70;
    public static final int DELIVERY_ANNOTATIONS = 0x71;
    public static final int MESSAGE_ANNOTATIONS = 0x72;
    public static final int PROPERTIES = 0x73;
    public static final int APPLICATION_PROPERTIES = 0x74;
    public static final int DATA = 0x75;
    public static final int AMQP_SEQUENCE = 0x76;
    public static final int AMQP_VALUE = 0x77;
    public static final int FOOTER = 0x78;

    private static final String[] SYMBOLS = {
        "amqp:header:list", "amqp:delivery-annotations:map", "amqp:message-annotations:map",
        "amqp:properties:list", "amqp:application-properties:map", "amqp:data:binary",
        "amqp:amqp-sequence:list", "amqp:amqp-value:*", "amqp:footer:map",
    };

    /** Resolves the symbolic section descriptors. */
    static final Descriptor.SymbolTable SYMBOL_TABLE = Descriptor.symbols(HEADER, SYMBOLS);

    private SectionCode() {
    }

    /** The symbolic descriptor of section {@code code}. */
    public static String symbol(int code) {
        return SYMBOLS[code - HEADER];
    }

    /**
     * Position in [3.2]'s order: header 0, delivery-annotations 1, message-annotations 2, properties 3,
     * application-properties 4, any body section 5, footer 6.
     */
    static int rank(int code) {
        return code <= APPLICATION_PROPERTIES ? code - HEADER : code == FOOTER ? 6 : 5;
    }
}
