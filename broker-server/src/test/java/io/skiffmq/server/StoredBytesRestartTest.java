package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.store.Journal;
import io.skiffmq.store.RecordDescriptor;
import io.skiffmq.store.RecordType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A message published over AMQP 1.0 into a durable queue is stored in its own format and, after a restart,
 * delivered with the publisher's bare message and footer byte for byte.
 */
@ExtendWith(LeakDetection.class)
class StoredBytesRestartTest {
    @TempDir
    Path dir;

    @Test
    void theBareMessageAndFooterComeBackByteForByteAfterARestart() throws Exception {
        Message message = Message.Factory.create();
        Header header = new Header();
        header.setDurable(true);
        message.setHeader(header);
        Properties properties = new Properties();
        properties.setMessageId("id-1");
        properties.setCorrelationId(new Binary(new byte[] {7, 8}));
        properties.setContentType(Symbol.valueOf("text/plain"));
        message.setProperties(properties);
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("n", UnsignedInteger.valueOf(42));
        app.put("kind", "refund");
        message.setApplicationProperties(new ApplicationProperties(app));
        message.setBody(new Data(new Binary("kept exactly".getBytes(StandardCharsets.UTF_8))));
        byte[] withoutFooter = Messages.encode(message);
        int bareStart = withoutFooter.length - Messages.encode(bareOf(message)).length;
        CRC32 crc = new CRC32();
        crc.update(withoutFooter, bareStart, withoutFooter.length - bareStart);
        message.setFooter(new Footer(Map.of(Symbol.valueOf("x-opt-crc-32"), UnsignedInteger.valueOf(crc.getValue()))));
        byte[] sent = Messages.encode(message);
        byte[] bareAndFooter = Arrays.copyOfRange(sent, bareStart, sent.length);

        String[] settings = {"data-dir=" + dir.resolve("data")};
        try (RunningBroker broker = RunningBroker.start(settings);
                RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "kept");
            publisher.readUntil(org.apache.qpid.proton.amqp.transport.Flow.class); // credit, once the queue is saved
            publisher.transfer(0, 0, sent, false);
            // accepted only once the journal has the message
            assertThat(publisher.readUntil(Disposition.class).getState()).isInstanceOf(Accepted.class);
        }

        List<byte[]> publishes = new ArrayList<>();
        try (Journal journal = new Journal(dir.resolve("data/vhosts/%2F/journal"), Journal.SyncPolicy.OS)) {
            List<Long> locations = new ArrayList<>();
            journal.replay((record, location) -> {
                if (record.type() == RecordType.PUBLISH) {
                    locations.add(location);
                }
            });
            for (long location : locations) {
                ByteBuf raw = journal.read(location);
                byte[] bytes = new byte[raw.readableBytes()];
                raw.readBytes(bytes);
                publishes.add(bytes);
            }
        }
        assertThat(publishes).hasSize(1);
        byte[] record = publishes.get(0);
        assertThat(record[RecordDescriptor.VERSION_OFFSET]).isEqualTo(RecordDescriptor.VERSION);
        assertThat(record[RecordDescriptor.FLAGS_OFFSET]).as("the format tag, the flags' high byte")
            .isEqualTo(MessageFormat.AMQP_1_0.tag());
        assertThat(Arrays.copyOfRange(record, record.length - sent.length, record.length))
            .as("the message as the client sent it").isEqualTo(sent);

        try (RunningBroker broker = RunningBroker.start(settings);
                RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("kept"), false);
            consumer.flow(0, 0, 1, false, false);
            byte[] received = consumer.read().payload();
            byte[] tail = Arrays.copyOfRange(received, received.length - bareAndFooter.length, received.length);
            assertThat(tail).isEqualTo(bareAndFooter);
            Message got = Messages.decode(received);
            assertThat(got.getMessageAnnotations().getValue()).containsEntry(Symbol.valueOf("x-exchange"), "");
            assertThat(got.isDurable()).isTrue();
        }
    }

    /** The same message without header and footer: its encoding is the bare message. */
    private static Message bareOf(Message message) {
        Message bare = Message.Factory.create();
        bare.setProperties(message.getProperties());
        bare.setApplicationProperties(message.getApplicationProperties());
        bare.setBody(message.getBody());
        return bare;
    }
}
