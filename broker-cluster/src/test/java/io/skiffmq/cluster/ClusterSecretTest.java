package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterSecretTest {
    @TempDir
    Path dir;

    @Test
    void aMissingSecretIsGeneratedForItsOwnerOnlyAndReadAgainAfterwards() throws IOException {
        Path file = dir.resolve("sub").resolve(".cluster-secret");
        ClusterSecret first = ClusterSecret.loadOrCreate(file);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(Files.readString(file).strip()).matches("[0-9a-f]{64}");
        ClusterSecret again = ClusterSecret.loadOrCreate(file);
        byte[] data = {1, 2, 3};
        assertThat(again.mac(data)).isEqualTo(first.mac(data));
        assertThat(ClusterSecret.loadOrCreate(dir.resolve("other")).mac(data)).isNotEqualTo(first.mac(data));
    }

    @Test
    void nodesStartingTogetherAllReadTheOneSecretThatWasWritten() throws Exception {
        int starters = 4;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(starters);
        try {
            // many rounds: a reader catching the file between its creation and its content is a narrow window
            for (int round = 0; round < 300; round++) {
                Path roundDir = Files.createDirectory(dir.resolve("round" + round));
                Path file = roundDir.resolve("shared-secret");
                java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(starters);
                java.util.List<java.util.concurrent.Future<byte[]>> macs = new java.util.ArrayList<>();
                for (int i = 0; i < starters; i++) {
                    macs.add(pool.submit(() -> {
                        go.await();
                        return ClusterSecret.loadOrCreate(file).mac(new byte[] {7});
                    }));
                }
                byte[] first = macs.get(0).get();
                for (var mac : macs) {
                    assertThat(mac.get()).isEqualTo(first);
                }
                try (var left = Files.list(roundDir)) {
                    assertThat(left.map(p -> p.getFileName().toString())).containsExactly("shared-secret");
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aSecretOthersCanReadIsRefused() throws IOException {
        Path file = dir.resolve("secret");
        Files.writeString(file, "cookie\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ClusterSecret.loadOrCreate(file)).isInstanceOf(IOException.class)
            .hasMessageContaining("owner only");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
        assertThat(ClusterSecret.loadOrCreate(file).mac(new byte[0]))
            .isEqualTo(ClusterSecret.of("cookie").mac(new byte[0]));
    }

    @Test
    void anEmptySecretIsRefused() throws IOException {
        Path file = dir.resolve("secret");
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        assertThatThrownBy(() -> ClusterSecret.loadOrCreate(file)).hasMessageContaining("empty");
    }

    @Test
    void nodeAddressesReadAsRabbitMqNodeNamesWithAPort() {
        NodeAddress node = NodeAddress.parse(" skiffmq@host-a.example:25672 ");
        assertThat(node.name()).isEqualTo("skiffmq@host-a.example");
        assertThat(node.socketAddress()).isEqualTo("host-a.example:25672");
        assertThat(NodeAddress.parseList("a@h:1, b@h:2,")).extracting(NodeAddress::name).containsExactly("a@h", "b@h");
        assertThatThrownBy(() -> NodeAddress.parse("host:25672")).hasMessageContaining("name@host");
        assertThatThrownBy(() -> NodeAddress.parse("a@h")).hasMessageContaining("name@host:port");
        assertThatThrownBy(() -> NodeAddress.parseList("a@h:1,a@h:2")).hasMessageContaining("twice");
    }
}
