package io.skiffmq.cluster;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The first byte of each entry the metadata log carries: whose it is. The applier's entries ({@link #APPLIER}) are
 * the bytes given to {@link MetadataLog#append}; the others are the cluster's own. Codes are on disk: never reuse
 * one.
 */
enum EntryKind {
    /** An entry for the {@link LogApplier}. */
    APPLIER(0),
    /** The cluster's name, UTF-8 (rabbitmqctl {@code set_cluster_name}). */
    CLUSTER_NAME(1);

    final byte code;

    EntryKind(int code) {
        this.code = (byte) code;
    }

    static EntryKind of(byte code) {
        return switch (code) {
            case 0 -> APPLIER;
            case 1 -> CLUSTER_NAME;
            default -> throw new IllegalStateException("unknown metadata entry kind " + code
                + ": written by a newer version?");
        };
    }

    /** This kind's byte followed by {@code payload}'s remaining bytes. */
    byte[] frame(ByteBuffer payload) {
        ByteBuffer source = payload.duplicate();
        byte[] framed = new byte[1 + source.remaining()];
        framed[0] = code;
        source.get(framed, 1, framed.length - 1);
        return framed;
    }

    static String text(ByteBuffer data) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
