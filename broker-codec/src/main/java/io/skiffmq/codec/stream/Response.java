package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import java.util.EnumSet;
import java.util.Set;

/**
 * A response that carries only its correlation id and code: to declare publisher, delete publisher, subscribe,
 * unsubscribe, create, delete, close, create super stream and delete super stream. Immutable.
 */
public record Response(CommandKey command, long correlationId, ResponseCode code) implements Command, Correlated {
    /** The commands answered this way. */
    public static final Set<CommandKey> COMMANDS = Set.copyOf(EnumSet.of(CommandKey.DECLARE_PUBLISHER,
        CommandKey.DELETE_PUBLISHER, CommandKey.SUBSCRIBE, CommandKey.UNSUBSCRIBE, CommandKey.CREATE_STREAM,
        CommandKey.DELETE_STREAM, CommandKey.CLOSE, CommandKey.CREATE_SUPER_STREAM, CommandKey.DELETE_SUPER_STREAM));

    public Response {
        if (!COMMANDS.contains(command)) {
            throw new IllegalArgumentException(command + " has a response of its own");
        }
    }

    @Override
    public boolean isResponse() {
        return true;
    }

    @Override
    public void writeBody(ByteBuf out) {
        Wire.writeUint32(out, correlationId, "correlation id");
        out.writeShort(code.code());
    }

    static Response read(CommandKey command, ByteBuf in) throws StreamDecodeException {
        return new Response(command, Wire.readUint32(in, "correlation id"), Wire.readCode(in));
    }
}
