package io.skiffmq.codec.amqp10;

/** Descriptor codes of the performatives [2.7], SASL frames [5.3.3] and delivery states [3.4]. */
public final class PerformativeCode {
    public static final int OPEN = 0x10;
    public static final int BEGIN = 0x11;
    public static final int ATTACH = 0x12;
    public static final int FLOW = 0x13;
    public static final int TRANSFER = 0x14;
    public static final int DISPOSITION = 0x15;
    public static final int DETACH = 0x16;
    public static final int END = 0x17;
    public static final int CLOSE = 0x18;

    public static final int RECEIVED = 0x23;
    public static final int ACCEPTED = 0x24;
    public static final int REJECTED = 0x25;
    public static final int RELEASED = 0x26;
    public static final int MODIFIED = 0x27;
    /** [4.5.5] {@code declared} and [4.5.6] {@code transactional-state}: a transaction's outcome and state. */
    public static final int DECLARED = 0x33;
    public static final int TRANSACTIONAL_STATE = 0x34;

    public static final int SASL_MECHANISMS = 0x40;
    public static final int SASL_INIT = 0x41;
    public static final int SASL_CHALLENGE = 0x42;
    public static final int SASL_RESPONSE = 0x43;
    public static final int SASL_OUTCOME = 0x44;

    /**
     * Resolves the symbolic descriptors of the performatives the fast path decodes; others are left to
     * proton-j, which knows every symbolic name (-1 here).
     */
    static final Descriptor.SymbolTable FAST_SYMBOLS = Descriptor.symbols(FLOW,
        "amqp:flow:list", "amqp:transfer:list", "amqp:disposition:list");

    private PerformativeCode() {
    }
}
