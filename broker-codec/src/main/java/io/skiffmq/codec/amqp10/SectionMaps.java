package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the maps of a message's sections where they lie in the buffer: message and delivery annotations
 * [3.2.2, 3.2.3], application properties [3.2.5] and the footer [3.2.10]. One entry is found by its key without
 * decoding the others or allocating ({@link #lookup}); the whole map is decoded on demand ({@link #decode}).
 * Stateless: {@link MessageSections} says where each map is and where its section ends.
 */
final class SectionMaps {
    private SectionMaps() {
    }

    /**
     * The value under {@code key} in the map at {@code value}, decoded alone; null when absent or null. Keys are
     * compared as UTF-8 bytes, without allocating.
     *
     * @param code8 the key's format code with a one-byte length ({@code str8} or {@code sym8})
     * @param code32 the same with a four-byte length
     */
    static Object lookup(ByteBuf buf, int value, int limit, CharSequence key, int code8, int code32)
            throws AmqpDecodeException {
        int at = find(buf, value, limit, key, code8, code32);
        return at < 0 ? null : ValueDecoder.decode(buf, at, limit);
    }

    /** Where the value under {@code key} starts in the map at {@code value}, -1 when absent; as {@link #lookup}. */
    static int find(ByteBuf buf, int value, int limit, CharSequence key, int code8, int code32)
            throws AmqpDecodeException {
        int count = TypeReader.mapCount(buf, value, limit);
        int position = TypeReader.compoundContentStart(buf, value);
        int asciiLength = asciiLength(key);
        for (int i = 0; i < count; i += 2) {
            int keyCode = TypeReader.formatCode(buf, position, limit);
            int keyEnd = TypeReader.dataEnd(buf, keyCode, position + 1, limit);
            boolean match = false;
            if (keyCode == code8 || keyCode == code32) {
                int contentStart = position + (keyCode == code8 ? 2 : 5);
                // an ASCII key matches only a key of the same byte length: most candidates end here
                match = asciiLength >= 0
                    ? keyEnd - contentStart == asciiLength && asciiEquals(buf, contentStart, key, asciiLength)
                    : TypeReader.utf8Equals(buf, keyCode, position, limit, key);
            }
            if (match) {
                return keyEnd;
            }
            position = TypeReader.valueEnd(buf, keyEnd, limit);
        }
        return -1;
    }

    /** The map at {@code value}, decoded, its keys all of {@code keyType} (else a decode error). */
    static <K> Map<K, Object> decode(ByteBuf buf, int value, int limit, Class<K> keyType)
            throws AmqpDecodeException {
        int count = TypeReader.mapCount(buf, value, limit);
        int position = TypeReader.compoundContentStart(buf, value);
        Map<K, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < count; i += 2) {
            Object key = ValueDecoder.decode(buf, position, limit);
            if (!keyType.isInstance(key)) {
                throw TypeReader.typeError(keyType.getSimpleName() + " key", buf.getUnsignedByte(position), position);
            }
            position = TypeReader.valueEnd(buf, position, limit);
            map.put(keyType.cast(key), ValueDecoder.decode(buf, position, limit));
            position = TypeReader.valueEnd(buf, position, limit);
        }
        return map;
    }

    /** The key's length when all its characters are ASCII (one UTF-8 byte each), else -1. */
    private static int asciiLength(CharSequence key) {
        for (int i = 0; i < key.length(); i++) {
            if (key.charAt(i) >= 0x80) {
                return -1;
            }
        }
        return key.length();
    }

    private static boolean asciiEquals(ByteBuf buf, int index, CharSequence key, int length) {
        for (int i = length - 1; i >= 0; i--) {
            // from the end: keys sharing a prefix ("key-1", "key-2"…) differ there
            if (buf.getByte(index + i) != key.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
