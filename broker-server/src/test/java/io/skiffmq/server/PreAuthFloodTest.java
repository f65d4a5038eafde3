package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.PreAuthLimit;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A flood of peers that connect and never finish their handshake (silent, or one byte of a header) against
 * {@code max-preauth-connections}: those beyond the limit are closed at once, the limit is logged once, a
 * bystander authenticated before the flood keeps doing round trips, and a new client gets in once the silent
 * peers are gone. 1,000 sockets on the client side plus as many on the broker's: well under {@code ulimit -n}
 * (20,000 here; the test needs about 2,100 descriptors).
 */
@ExtendWith(LeakDetection.class)
class PreAuthFloodTest {
    private static final int LIMIT = 200;
    private static final int PEERS = 1000;

    @Test
    void peersBeyondTheLimitAreClosedAtOnceWhileABystanderKeepsWorking() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(PreAuthLimit.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        List<SocketChannel> peers = new ArrayList<>();
        try (RunningBroker broker = RunningBroker.start("max-preauth-connections=" + LIMIT);
                Bystander bystander = Bystander.amqp091(broker.port());
                Selector selector = Selector.open()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> bystander.roundTrips() >= 10);
            assertThat(broker.preAuth().count()).as("the bystander is open: it no longer counts").isZero();

            InetSocketAddress address = new InetSocketAddress("127.0.0.1", broker.port());
            for (int i = 0; i < PEERS; i++) {
                SocketChannel peer = SocketChannel.open(address);
                peers.add(peer);
                if (i % 2 == 0) {
                    peer.write(ByteBuffer.wrap(new byte[] {'A'})); // the first byte of a header, and no more
                }
                peer.configureBlocking(false);
                peer.register(selector, SelectionKey.OP_READ, i);
            }
            await().atMost(Duration.ofSeconds(30))
                .until(() -> broker.preAuth().refused() == PEERS - LIMIT);
            assertThat(broker.preAuth().count()).isEqualTo(LIMIT);

            // each refused peer sees its connection end without a byte; the others hear nothing (the
            // handshake timeout, 10 s by default, is far off)
            Set<Integer> ended = new HashSet<>();
            ByteBuffer buffer = ByteBuffer.allocate(64);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (ended.size() < PEERS - LIMIT && System.nanoTime() < deadline) {
                selector.select(200);
                for (SelectionKey key : selector.selectedKeys()) {
                    buffer.clear();
                    int read;
                    try {
                        read = ((SocketChannel) key.channel()).read(buffer);
                    } catch (IOException reset) {
                        read = -1;
                    }
                    assertThat(read).as("bytes a refused peer got").isEqualTo(-1);
                    ended.add((Integer) key.attachment());
                    key.cancel();
                }
                selector.selectedKeys().clear();
            }
            assertThat(ended).hasSize(PEERS - LIMIT);
            assertThat(broker.preAuth().count()).isEqualTo(LIMIT);
            assertThat(metric(broker, "skiffmq_connections_refused_preauth_total")).isEqualTo(PEERS - LIMIT);
            assertThat(metric(broker, "skiffmq_connections_preauth")).isEqualTo(LIMIT);

            // a legitimate client is refused too while the slots are taken
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port());
            factory.setAutomaticRecoveryEnabled(false);
            assertThatThrownBy(factory::newConnection).isInstanceOf(IOException.class);
            bystander.assertHealthy(10, 10_000);

            for (SocketChannel peer : peers) {
                peer.close();
            }
            peers.clear();
            await().atMost(Duration.ofSeconds(30)).until(() -> broker.preAuth().count() == 0);
            try (com.rabbitmq.client.Connection fresh = factory.newConnection()) {
                com.rabbitmq.client.Channel channel = fresh.createChannel();
                String queue = channel.queueDeclare().getQueue();
                channel.basicPublish("", queue, null, new byte[] {1});
                await().atMost(Duration.ofSeconds(10)).until(() -> channel.basicGet(queue, true) != null);
            }
            long before = bystander.roundTrips();
            await().atMost(Duration.ofSeconds(30)).until(() -> bystander.roundTrips() > before + 10);
            bystander.assertHealthy(20, 10_000);

            List<String> warnings = log.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).toList();
            assertThat(warnings).as("the limit is logged once").hasSize(1);
            assertThat(warnings.get(0)).contains("max-preauth-connections");
            assertThat(broker.preAuth().refused()).isEqualTo(PEERS - LIMIT + 1);
        } finally {
            logger.detachAppender(log);
            for (SocketChannel peer : peers) {
                peer.close();
            }
        }
    }

    /** On the AMQPS port the limit applies before the TLS handshake: a peer over it gets no byte of one. */
    @Test
    void overTheLimitATlsPeerIsClosedBeforeItsHandshake(@TempDir Path dir) throws Exception {
        TestCertificates.Issued ca = TestCertificates.ca("SkiffMQ test CA");
        TestCertificates.writePem(TestCertificates.server(ca), dir.resolve("server.pem"), dir.resolve("server.key"));
        try (RunningBroker broker = RunningBroker.start("max-preauth-connections=2", "amqps-port=0",
                "tls-cert-file=" + dir.resolve("server.pem"), "tls-key-file=" + dir.resolve("server.key"));
                Socket first = new Socket("127.0.0.1", broker.amqpsPort());
                Socket second = new Socket("127.0.0.1", broker.amqpsPort());
                Socket third = new Socket("127.0.0.1", broker.amqpsPort())) {
            await().atMost(Duration.ofSeconds(10)).until(() -> broker.preAuth().refused() == 1);
            third.setSoTimeout(10_000);
            // a TLS ClientHello's first bytes: a broker that began the handshake would answer them
            third.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00});
            int read;
            try {
                read = third.getInputStream().read();
            } catch (IOException reset) {
                read = -1;
            }
            assertThat(read).as("what the refused TLS peer read").isEqualTo(-1);
            assertThat(broker.preAuth().count()).isEqualTo(2);
        }
    }

    /** One unlabelled series of the broker's Prometheus scrape. */
    private static long metric(RunningBroker broker, String name) throws Exception {
        HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + broker.metricsPort() + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString());
        Matcher line = Pattern.compile("(?m)^" + name + " ([0-9.eE+]+)$").matcher(scrape.body());
        assertThat(line.find()).as("%s in the scrape", name).isTrue();
        return (long) Double.parseDouble(line.group(1));
    }
}
