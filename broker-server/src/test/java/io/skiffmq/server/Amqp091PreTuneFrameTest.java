package io.skiffmq.server;

import static io.skiffmq.server.Raw091Client.FRAME_END;
import static io.skiffmq.server.Raw091Client.METHOD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.impl.LongStringHelper;
import com.rabbitmq.client.impl.Method;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.SocketException;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Frames before {@code tune-ok} agreed a frame-max are held to {@code amqp091-initial-frame-max}, RabbitMQ's
 * {@code initial_frame_max} (8192, its frame-min-size, by default; {@code rabbit_reader:start_connection/5}), with the
 * same 8 bytes of slack as later frames. One over it, in {@code start-ok} or while {@code tune-ok} is awaited, is a
 * frame error that RabbitMQ does not trust the client with: the socket closes, no {@code connection.close}
 * ({@code rabbit_reader:handle_exception/3} in states starting and tuning). After {@code tune-ok} the agreed
 * frame-max holds, and a frame over it gets 501.
 */
@ExtendWith(LeakDetection.class)
class Amqp091PreTuneFrameTest {

    /** A start-ok whose client properties carry {@code padding} bytes more than the Java client's own. */
    private static byte[] startOkPayload(int padding) throws IOException {
        AMQP.Connection.StartOk startOk = new AMQP.Connection.StartOk.Builder()
            .clientProperties(Map.of("product", "Amqp091PreTuneFrameTest", "padding",
                LongStringHelper.asLongString(new byte[padding]),
                "capabilities", Map.of("authentication_failure_close", true)))
            .mechanism("PLAIN").response(LongStringHelper.asLongString("\0guest\0guest")).locale("en_US").build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ((Method) startOk).toFrame(0).writeTo(new DataOutputStream(bytes));
        byte[] frame = bytes.toByteArray();
        return Arrays.copyOfRange(frame, 7, frame.length - 1);
    }

    /** A start-ok payload of exactly {@code size} bytes. */
    private static byte[] startOkOf(int size) throws IOException {
        int base = startOkPayload(0).length;
        byte[] payload = startOkPayload(size - base);
        assertThat(payload).hasSize(size);
        return payload;
    }

    /** A connection to {@code broker} that has sent its header and read {@code connection.start}. */
    private static Raw091Client started(RunningBroker broker) throws IOException {
        Raw091Client client = new Raw091Client("127.0.0.1", broker.port());
        client.writeRaw(Raw091Client.HEADER_091);
        client.expect(AMQP.Connection.Start.class);
        return client;
    }

    /** Writes a method frame the broker refuses on its header: it may close the socket before the rest is out. */
    private static void writeRefused(Raw091Client client, byte[] payload) throws IOException {
        try {
            client.writeFrame(METHOD, 0, payload, FRAME_END);
        } catch (SocketException closedMeanwhile) {
            // the broker closed while the payload was still going out
        }
    }

    @Test
    void aStartOkOverTheInitialFrameMaxClosesTheSocketWithoutAClose() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
             Raw091Client client = started(broker)) {
            // 8192 + 8 of slack is the largest frame; this one is a byte over, refused on its header
            writeRefused(client, startOkOf(8192 + 1));
            assertThat(client.closedByBroker()).as("closed, nothing sent (not even connection.close)").isTrue();
        }
    }

    @Test
    void aStartOkOfTheInitialFrameMaxWithItsSlackIsTaken() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
             Raw091Client client = started(broker)) {
            client.writeFrame(METHOD, 0, startOkOf(8192), FRAME_END);
            client.expect(AMQP.Connection.Tune.class);
        }
    }

    @Test
    void aFrameOverTheInitialFrameMaxWhileTuneOkIsAwaitedClosesTheSocket() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
             Raw091Client client = new Raw091Client("127.0.0.1", broker.port())) {
            client.start();
            writeRefused(client, new byte[8192 + 1]);
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void theInitialFrameMaxIsASetting() throws Exception {
        try (RunningBroker broker = RunningBroker.start("amqp091-initial-frame-max=20000")) {
            try (Raw091Client client = started(broker)) {
                client.writeFrame(METHOD, 0, startOkOf(20_000), FRAME_END);
                client.expect(AMQP.Connection.Tune.class);
            }
            try (Raw091Client client = started(broker)) {
                writeRefused(client, startOkOf(20_001));
                assertThat(client.closedByBroker()).isTrue();
            }
        }
    }

    /** The RabbitMQ Java client's own check (its FrameMax suite): client properties of frame-min-size fail. */
    @Test
    void theJavaClientCannotConnectWithClientPropertiesOverTheLimit() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port());
            factory.setAutomaticRecoveryEnabled(false);
            factory.getClientProperties().put("too_long", LongStringHelper.asLongString(new byte[AMQP.FRAME_MIN_SIZE]));
            Throwable thrown = catchThrowable(() -> factory.newConnection().close());
            assertThat(thrown).isInstanceOf(IOException.class);
            factory.getClientProperties().remove("too_long");
            try (Connection connection = factory.newConnection()) {
                assertThat(connection.isOpen()).as("the broker goes on").isTrue();
            }
        }
    }
}
