package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The keys of the commands a group applies are decoded once while they repeat ({@link QueueCommands.Keys}): the
 * same object for the same bytes, a new one as soon as any part differs (vhost, name, incarnation), the buffer left
 * after the key either way, and a key cut short refused as {@link QueueCommands#key} refuses it.
 */
class QueueCommandKeysTest {
    private static ByteBuffer afterKind(byte[] command) {
        ByteBuffer in = ByteBuffer.wrap(command).asReadOnlyBuffer();
        in.get();
        return in;
    }

    @Test
    void aRepeatedKeyIsTheSameObjectAndAnyChangeIsSeen() {
        QueueCommands.Keys keys = new QueueCommands.Keys();
        QueueCommands.Key q = new QueueCommands.Key("/", "q", 1);
        ByteBuffer first = afterKind(QueueCommands.settle(q, 5));
        QueueCommands.Key read = keys.read(first);
        assertThat(read).isEqualTo(q);
        assertThat(first.getLong()).as("the buffer after the key").isEqualTo(5);

        ByteBuffer again = afterKind(QueueCommands.settle(q, 6));
        assertThat(keys.read(again)).isSameAs(read);
        assertThat(again.getLong()).isEqualTo(6);

        for (QueueCommands.Key other : new QueueCommands.Key[] {new QueueCommands.Key("/", "r", 1),
                new QueueCommands.Key("v", "q", 1), new QueueCommands.Key("/", "q", 2),
                new QueueCommands.Key("/", "q", 1 + (1L << 16)), // 18 bytes: one in the last long compared
                new QueueCommands.Key("/", "qq", 1)}) {
            ByteBuffer in = afterKind(QueueCommands.settle(other, 7));
            assertThat(keys.read(in)).isEqualTo(other).isNotSameAs(read);
            assertThat(in.getLong()).isEqualTo(7);
        }
    }

    @Test
    void aKeyCutShortIsRefused() {
        QueueCommands.Keys keys = new QueueCommands.Keys();
        QueueCommands.Key q = new QueueCommands.Key("/", "q", 1);
        keys.read(afterKind(QueueCommands.settle(q, 5)));
        byte[] command = QueueCommands.settle(q, 5);
        byte[] cut = Arrays.copyOf(command, 1 + 4 + 1 + 4 + 1 + 4); // the incarnation cut short
        assertThatThrownBy(() -> keys.read(afterKind(cut))).isInstanceOf(RuntimeException.class);
        ByteBuffer bad = ByteBuffer.allocate(1 + 4).put((byte) 2).putInt(-1).flip();
        bad.get();
        assertThatThrownBy(() -> keys.read(bad)).isInstanceOf(IllegalArgumentException.class);
    }
}
