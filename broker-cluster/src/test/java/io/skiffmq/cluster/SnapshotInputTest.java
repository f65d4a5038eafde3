package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SnapshotInputTest {
    /** What one field read gave, from either reader. */
    private static List<Object> readAll(DataInput in, int[] kinds, int[] sizes) throws IOException {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < kinds.length; i++) {
            switch (kinds[i]) {
                case 0 -> out.add(in.readLong());
                case 1 -> out.add(in.readInt());
                case 2 -> out.add(in.readShort());
                case 3 -> out.add(in.readUnsignedShort());
                case 4 -> out.add(in.readByte());
                case 5 -> out.add(in.readUnsignedByte());
                case 6 -> out.add(in.readBoolean());
                case 7 -> out.add(in.readUTF());
                case 8 -> out.add(in.readDouble());
                default -> {
                    byte[] bytes = new byte[sizes[i]];
                    in.readFully(bytes);
                    out.add(java.util.Arrays.toString(bytes));
                }
            }
        }
        return out;
    }

    @Test
    void itReadsWhatDataInputStreamReadsAcrossEveryBufferEdge() throws IOException {
        Random random = new Random(30);
        int fields = 5_000;
        int[] kinds = new int[fields];
        int[] sizes = new int[fields];
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (int i = 0; i < fields; i++) {
            kinds[i] = random.nextInt(10);
            switch (kinds[i]) {
                case 0 -> out.writeLong(random.nextLong());
                case 1 -> out.writeInt(random.nextInt());
                case 2, 3 -> out.writeShort(random.nextInt());
                case 4, 5 -> out.writeByte(random.nextInt());
                case 6 -> out.writeBoolean(random.nextBoolean());
                case 7 -> out.writeUTF("q-" + random.nextInt() + "-é");
                case 8 -> out.writeDouble(random.nextDouble());
                default -> {
                    sizes[i] = random.nextInt(10) == 0 ? 100 + random.nextInt(200) : random.nextInt(30);
                    byte[] b = new byte[sizes[i]];
                    random.nextBytes(b);
                    out.write(b);
                }
            }
        }
        byte[] written = bytes.toByteArray();
        byte[] trailed = java.util.Arrays.copyOf(written, written.length + 16); // bytes past what it may take
        List<Object> expected = readAll(new DataInputStream(new ByteArrayInputStream(written)), kinds, sizes);
        for (int buffer : new int[] {8, 13, 64, 4096}) {
            SnapshotInput in = new SnapshotInput(new ByteArrayInputStream(trailed), written.length, buffer);
            assertThat(readAll(in, kinds, sizes)).as("a buffer of %d", buffer).isEqualTo(expected);
            assertThat(in.read()).as("nothing past its length").isEqualTo(-1);
            assertThatThrownBy(in::readLong).isInstanceOf(EOFException.class);
        }
    }

    @Test
    void aFieldCutShortAtItsLengthIsAnEndOfFile() throws IOException {
        byte[] bytes = {0, 0, 0, 1, 0, 0, 0};
        SnapshotInput in = new SnapshotInput(new ByteArrayInputStream(bytes), 7, 8);
        assertThat(in.readInt()).isEqualTo(1);
        assertThatThrownBy(in::readInt).isInstanceOf(EOFException.class);
        SnapshotInput cut = new SnapshotInput(new ByteArrayInputStream(bytes), 3, 8);
        assertThatThrownBy(() -> cut.readFully(new byte[4])).isInstanceOf(EOFException.class);
    }

    @Test
    void asAStreamItGivesTheRestUpToItsLength() throws IOException {
        byte[] bytes = new byte[10_000];
        new Random(1).nextBytes(bytes);
        SnapshotInput in = new SnapshotInput(new ByteArrayInputStream(bytes), 9_000, 100);
        long first = in.readLong();
        ByteArrayOutputStream rest = new ByteArrayOutputStream();
        in.transferTo(rest);
        assertThat(first).isEqualTo(java.nio.ByteBuffer.wrap(bytes).getLong());
        assertThat(rest.toByteArray()).isEqualTo(java.util.Arrays.copyOfRange(bytes, 8, 9_000));
    }
}
