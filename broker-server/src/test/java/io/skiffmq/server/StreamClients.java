package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.ConfirmationStatus;
import com.rabbitmq.stream.Environment;
import com.rabbitmq.stream.EnvironmentBuilder;
import com.rabbitmq.stream.Message;
import com.rabbitmq.stream.Producer;
import com.rabbitmq.stream.impl.Client;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** What the stream protocol's end-to-end tests share: environments on a broker, publishing with confirms. */
final class StreamClients {
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private StreamClients() {
    }

    /** An environment builder for {@code port} on loopback, as guest, recovering quickly. */
    static EnvironmentBuilder builder(int port) {
        return Environment.builder().host("127.0.0.1").port(port).username("guest").password("guest")
            .recoveryBackOffDelayPolicy(com.rabbitmq.stream.BackOffDelayPolicy.fixed(Duration.ofMillis(200)))
            .topologyUpdateBackOffDelayPolicy(com.rabbitmq.stream.BackOffDelayPolicy.fixed(Duration.ofMillis(200)));
    }

    static Environment environment(RunningBroker broker) {
        return builder(broker.streamPort()).build();
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(Message message) {
        return new String(message.getBodyAsBinary(), StandardCharsets.UTF_8);
    }

    /**
     * Sends {@code count} messages with bodies {@code prefix0, prefix1, …} and waits until every one is confirmed.
     *
     * @return the confirmation statuses that were not confirmed (none when all went well)
     */
    static List<ConfirmationStatus> sendAndConfirm(Producer producer, String prefix, int count) throws Exception {
        CountDownLatch done = new CountDownLatch(count);
        ConcurrentLinkedQueue<ConfirmationStatus> failed = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < count; i++) {
            producer.send(producer.messageBuilder().addData(bytes(prefix + i)).build(), status -> {
                if (!status.isConfirmed()) {
                    failed.add(status);
                }
                done.countDown();
            });
        }
        assertThat(done.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("every message answered").isTrue();
        return List.copyOf(failed);
    }

    /** The response code of {@code delete_super_stream}, package-private in the client as its create is. */
    static short deleteSuperStream(Client client, String name) throws Exception {
        Method delete = Client.class.getDeclaredMethod("deleteSuperStream", String.class);
        delete.setAccessible(true);
        return ((Client.Response) delete.invoke(client, name)).getResponseCode();
    }

    /**
     * The response code of {@code create_super_stream}: the client's method is package-private (its
     * {@code Environment} takes 0x05 as done), so it is called by reflection.
     */
    static short createSuperStream(Client client, String name, List<String> partitions, List<String> bindingKeys)
            throws Exception {
        Method create = Client.class.getDeclaredMethod("createSuperStream", String.class, List.class, List.class,
            Map.class);
        create.setAccessible(true);
        return ((Client.Response) create.invoke(client, name, partitions, bindingKeys, Map.of())).getResponseCode();
    }

    /** Counts the confirmations of a producer. */
    static final class Confirms {
        final AtomicInteger confirmed = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();

        void accept(ConfirmationStatus status) {
            (status.isConfirmed() ? confirmed : failed).incrementAndGet();
        }
    }
}
