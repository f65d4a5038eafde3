package io.skiffmq.server.cluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.DeadLetters;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The commands of a replicated quorum queue, as its group's log carries them (docs/quorum-queues.md, "How it is
 * replicated"): a kind byte, the queue ({@link Key}: virtual host, name, incarnation), then the kind's fields.
 * An enqueue carries the message's stored form exactly (format, exchange, routing key, the publisher's bytes), so a
 * consumer after a failover gets what was published. Codes are on disk: never reuse one. Stateless.
 */
final class QueueCommands {
    static final byte ENQUEUE = 1;
    static final byte SETTLE = 2;
    static final byte RETURN = 3;
    static final byte DEAD_LETTERING = 4;
    static final byte DELETE = 5;
    /**
     * A membership change's first step in the group the queue leaves (docs/quorum-queues.md, "Changing members"):
     * the queue's commands are refused from there on, so its replicas hold its final state there. The move's id.
     */
    static final byte FREEZE = 6;
    /** The move was abandoned: the queue's commands are taken again in that group. The move's id. */
    static final byte UNFREEZE = 7;
    /**
     * Part of a queue's state adopted by the group it moves to (a transfer, not a command of an epoch): the move's
     * id, a count, then that many replica entries ({@link HeldMessages#write}).
     */
    static final byte ADOPT = 8;
    /**
     * An enqueue of a message another node forwarded: that node's enqueuer id and its number for the message
     * ({@link Enqueuers}), then an enqueue's fields.
     */
    static final byte ENQUEUE_FORWARDED = 9;

    /** A replicated queue: an incarnation of a virtual host's queue record. */
    record Key(String vhost, String name, long incarnation) {
    }

    private QueueCommands() {
    }

    static byte[] enqueue(Key key, long sequence, long deliveryCount, long returns, long expiresAt, Message message) {
        return enqueue(key, sequence, deliveryCount, returns, expiresAt, message, 0, -1);
    }

    /** @param number the forwarding node's number for the message, with its {@code enqueuer} id; negative for none */
    static byte[] enqueue(Key key, long sequence, long deliveryCount, long returns, long expiresAt, Message message,
            long enqueuer, long number) {
        byte[] exchange = utf8(message.exchange());
        byte[] routingKey = utf8(message.routingKey() == null ? "" : message.routingKey());
        int size = message.storedSize();
        ByteBuf stored = Unpooled.buffer(size);
        try {
            message.writeStored(stored);
            boolean forwarded = number >= 0;
            ByteBuffer out = start(forwarded ? ENQUEUE_FORWARDED : ENQUEUE, key, (forwarded ? 16 : 0) + 8 * 4 + 1
                + 4 + exchange.length + 4 + routingKey.length + 4 + stored.readableBytes());
            if (forwarded) {
                out.putLong(enqueuer).putLong(number);
            }
            out.putLong(sequence).putLong(deliveryCount).putLong(returns).putLong(expiresAt);
            out.put(message.format().tag());
            out.putInt(exchange.length).put(exchange).putInt(routingKey.length).put(routingKey);
            out.putInt(stored.readableBytes());
            stored.readBytes(out);
            return out.array();
        } finally {
            stored.release();
        }
    }

    static byte[] settle(Key key, long sequence) {
        return start(SETTLE, key, 8).putLong(sequence).array();
    }

    static byte[] returned(Key key, long sequence, long deliveryCount, long returns) {
        return start(RETURN, key, 24).putLong(sequence).putLong(deliveryCount).putLong(returns).array();
    }

    static byte[] deadLettering(Key key, long sequence, DeadLetters.Reason reason) {
        return start(DEAD_LETTERING, key, 9).putLong(sequence).put((byte) reason.ordinal()).array();
    }

    static byte[] delete(Key key) {
        return start(DELETE, key, 0).array();
    }

    static byte[] freeze(Key key, long move) {
        return start(FREEZE, key, 8).putLong(move).array();
    }

    static byte[] unfreeze(Key key, long move) {
        return start(UNFREEZE, key, 8).putLong(move).array();
    }

    /** The entries {@code from} (inclusive) to {@code to} (exclusive), as one adoption of the move {@code move}. */
    static byte[] adopt(Key key, long move, HeldMessages entries, int from, int to) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            out.writeLong(move);
            out.writeInt(to - from);
            for (int i = from; i < to; i++) {
                entries.write(i, out);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        byte[] body = bytes.toByteArray();
        return start(ADOPT, key, body.length).put(body).array();
    }

    /**
     * Commands as one entry of the group's log: each as a 4-byte length and its bytes, so that one entry (one
     * append, one fsync on each member) carries what a queue did in one turn.
     */
    static byte[] batch(List<byte[]> commands) {
        int size = 0;
        for (byte[] command : commands) {
            size += 4 + command.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (byte[] command : commands) {
            out.putInt(command.length).put(command);
        }
        return out.array();
    }

    private static ByteBuffer start(byte kind, Key key, int rest) {
        byte[] vhost = utf8(key.vhost());
        byte[] name = utf8(key.name());
        ByteBuffer out = ByteBuffer.allocate(1 + 4 + vhost.length + 4 + name.length + 8 + rest);
        return out.put(kind).putInt(vhost.length).put(vhost).putInt(name.length).put(name).putLong(key.incarnation());
    }

    static Key key(ByteBuffer in) {
        return new Key(string(in), string(in), in.getLong());
    }

    static String string(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("bad string length " + length + " in a queue command");
        }
        String s = StandardCharsets.UTF_8.decode(in.slice(in.position(), length)).toString();
        in.position(in.position() + length);
        return s;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The message of an enqueue's stored part (format, exchange, routing key, bytes), {@code length} bytes of
     * {@code array} from {@code offset}, as a new message with one reference over that array, its exchange and routing
     * key read through {@code exchanges} and {@code keys}.
     */
    static Message message(byte[] array, int offset, int length, Names exchanges, Names keys)
            throws MalformedMessageException {
        ByteBuffer in = ByteBuffer.wrap(array, offset, length);
        MessageFormat format = MessageFormat.ofTag(in.get());
        if (format == null) {
            throw new MalformedMessageException("unknown message format in a queue command", null);
        }
        String exchange = exchanges.read(in);
        String routingKey = keys.read(in);
        int bytes = in.getInt();
        if (bytes < 0 || bytes > in.remaining()) {
            // the array may hold other messages after this one: never read into them
            throw new MalformedMessageException("a stored message of " + bytes + " bytes in " + in.remaining(), null);
        }
        // the array's buffer itself, its indexes around the message: the message's own slices are all it adds
        return Message.readStored(format,
            Unpooled.wrappedBuffer(array).setIndex(in.position(), in.position() + bytes), true, exchange, routingKey);
    }

    /**
     * The last string read by {@link #read}, and its bytes: the next one with the same bytes is that string again,
     * neither decoded nor allocated, as the messages of one queue mostly share their exchange and routing key.
     * Owned by the thread reading.
     */
    static final class Names {
        private byte[] bytes = new byte[0];
        private String last = "";

        /** A string as {@link QueueCommands#string} reads it, from a buffer with an array. */
        String read(ByteBuffer in) {
            int length = in.getInt();
            if (length < 0 || length > in.remaining()) {
                throw new IllegalArgumentException("bad string length " + length + " in a queue command");
            }
            int from = in.arrayOffset() + in.position();
            in.position(in.position() + length);
            if (!java.util.Arrays.equals(in.array(), from, from + length, bytes, 0, bytes.length)) {
                bytes = java.util.Arrays.copyOfRange(in.array(), from, from + length);
                last = new String(bytes, StandardCharsets.UTF_8);
            }
            return last;
        }
    }

    /**
     * Reads keys in turn ({@link QueueCommands#key}): the key that most commands of a group's entry repeat is decoded
     * once, and is the same object while its bytes repeat. Owned by the group's apply thread.
     */
    static final class Keys {
        private byte[] last = new byte[0];
        /** {@link #last}, read a long at a time in {@code in}'s byte order. */
        private ByteBuffer lastLongs = ByteBuffer.wrap(last);
        private Key key;

        Key read(ByteBuffer in) {
            int from = in.position();
            int length = encodedLength(in, from);
            if (key != null && length == last.length && same(in, from)) {
                in.position(from + length);
                return key;
            }
            Key read = key(in);
            if (length > 0) {
                last = new byte[length];
                in.get(from, last);
                lastLongs = ByteBuffer.wrap(last).order(in.order());
                key = read;
            }
            return read;
        }

        /** Compared a long at a time: the key is read before every command of a restart's millions. */
        private boolean same(ByteBuffer in, int from) {
            int i = 0;
            for (; i + Long.BYTES <= last.length; i += Long.BYTES) {
                if (in.getLong(from + i) != lastLongs.getLong(i)) {
                    return false;
                }
            }
            for (; i < last.length; i++) {
                if (in.get(from + i) != last[i]) {
                    return false;
                }
            }
            return true;
        }

        /** The bytes of the key at {@code from}: two strings and the incarnation; 0 when they do not fit. */
        private static int encodedLength(ByteBuffer in, int from) {
            int limit = in.limit();
            if (limit - from < 4) {
                return 0;
            }
            int vhost = in.getInt(from);
            if (vhost < 0 || limit - from - 4 - vhost < 4) {
                return 0;
            }
            int name = in.getInt(from + 4 + vhost);
            long length = 4L + vhost + 4 + name + 8;
            return name < 0 || length > limit - from ? 0 : (int) length;
        }
    }
}
