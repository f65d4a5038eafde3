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
import java.io.IOException;
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
}
