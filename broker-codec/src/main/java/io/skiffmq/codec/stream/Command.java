package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * One stream protocol command that is not on the per-message path, as a record, grouped by what it is about:
 * {@link ConnectionCommand}, {@link PublisherCommand}, {@link ConsumerCommand}, {@link ManagementCommand}, and
 * {@link Response} for the responses that carry only a code. Decoded by {@link StreamCodec#decode}, written by
 * {@link StreamFrameWriter#writeCommand}. The commands that come once or more per message (publish, publish confirm
 * and error, deliver, credit, store offset) are read through reusable flyweights ({@link PublishFrame}…) and
 * written by {@link StreamFrameWriter} and {@link PublishFrameWriter}, without objects. Immutable (maps and lists
 * given to a record are not copied).
 */
public sealed interface Command
    permits ConnectionCommand, PublisherCommand, ConsumerCommand, ManagementCommand, Response {

    CommandKey command();

    /** True for a response: the key goes on the wire with {@link CommandKey#RESPONSE_FLAG}. */
    default boolean isResponse() {
        return false;
    }

    /** Every command that is a record has version 1 only. */
    default int version() {
        return 1;
    }

    /** The key on the wire. */
    default int wireKey() {
        return isResponse() ? command().responseKey() : command().key();
    }

    /**
     * Appends the fields (everything after key and version) at {@code out}'s writer index.
     *
     * @throws IllegalArgumentException when a value does not fit its type (a string over 32,767 UTF-8 bytes or
     *         null, a uint8, uint16 or uint32 out of range)
     */
    void writeBody(ByteBuf out);
}
