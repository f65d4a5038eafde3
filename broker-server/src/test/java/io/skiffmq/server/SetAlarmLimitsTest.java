package io.skiffmq.server;

import static io.skiffmq.server.SkiffmqCtlTest.ctl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.netty.util.internal.PlatformDependent;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import io.skiffmq.server.SkiffmqCtlTest.Result;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * skiffmqctl's {@code set_vm_memory_high_watermark} and {@code set_disk_free_limit}, as the RabbitMQ Java client's
 * suites use them to raise and clear alarms ({@code Host.setResourceAlarm}): the alarm rises or clears at once,
 * blocked publishers hear of it, and rabbitmqctl's validation refuses what it refuses.
 */
class SetAlarmLimitsTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Result ctlOk(String... args) {
        Result result = ctl(broker.managementPort(), args);
        assertThat(result.code()).as(result.err()).isZero();
        return result;
    }

    @Test
    void theDefaultWatermarkIsAFractionOfTheHeapAndDirectMemoryTogether() {
        // issue 30: both are counted as in use, so both limits are; against the heap alone, 16 MiB messages in
        // flight passed the watermark of a 1 GiB heap with heap and direct memory each well within their limits
        assertThat(broker.broker().resourceMonitor().memoryLimit())
            .isEqualTo((long) ((Runtime.getRuntime().maxMemory() + PlatformDependent.maxDirectMemory()) * 0.4));
    }

    @Test
    void aMemoryWatermarkSetAtRunTimeBlocksAndReleasesPublishers() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        List<String> events = new CopyOnWriteArrayList<>();
        try (Connection connection = factory.newConnection()) {
            connection.addBlockedListener(new BlockedListener() {
                @Override
                public void handleBlocked(String reason) {
                    events.add("blocked: " + reason);
                }

                @Override
                public void handleUnblocked() {
                    events.add("unblocked");
                }
            });
            var channel = connection.createChannel();
            Result set = ctlOk("set_vm_memory_high_watermark", "0.000000001");
            assertThat(set.out()).startsWith("Setting memory threshold on ").endsWith(" to 0.000000001 ...\n");
            assertThat(broker.broker().alarms().active()).containsExactly(Resource.MEMORY);
            channel.basicPublish("", "nowhere", null, new byte[1]); // a connection is blocked once it publishes
            await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("blocked: low on memory"));

            ctlOk("set_vm_memory_high_watermark", "0.4");
            assertThat(broker.broker().alarms().any()).isFalse();
            await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("unblocked"));
            assertThat(broker.broker().resourceMonitor().memoryLimit()).as("0.4 of the heap and direct memory")
                .isEqualTo((long) ((Runtime.getRuntime().maxMemory() + PlatformDependent.maxDirectMemory()) * 0.4));

            ctlOk("set_vm_memory_high_watermark", "absolute", "1GB");
            assertThat(broker.broker().resourceMonitor().memoryLimit()).isEqualTo(1_000_000_000L);
            ctlOk("set_vm_memory_high_watermark", "absolute", "1024MiB");
            assertThat(broker.broker().resourceMonitor().memoryLimit()).isEqualTo(1L << 30);
        } finally {
            ctl(broker.managementPort(), "set_vm_memory_high_watermark", "0.4");
        }
    }

    @Test
    void aDiskFreeLimitSetAtRunTimeRaisesAndClearsTheDiskAlarm() {
        try {
            Result set = ctlOk("set_disk_free_limit", "1000000000GB"); // an exabyte: more than any disk here has
            assertThat(set.out()).endsWith(" to 1000000000GB bytes ...\n");
            assertThat(broker.broker().alarms().active()).containsExactly(Resource.DISK);
            ctlOk("set_disk_free_limit", "50MB");
            assertThat(broker.broker().alarms().any()).isFalse();
            assertThat(broker.broker().resourceMonitor().diskFreeLimit()).isEqualTo(50_000_000L);
            ctlOk("set_disk_free_limit", "mem_relative", "0");
            assertThat(broker.broker().resourceMonitor().diskFreeLimit()).isZero();
        } finally {
            ctl(broker.managementPort(), "set_disk_free_limit", "50MB");
        }
    }

    @Test
    void theAlarmsRabbitMqsClientSuitesRaiseThroughEvalAreRaisedAndCleared() {
        // com.rabbitmq.tools.Host.setResourceAlarm and clearResourceAlarm, verbatim
        Result set = ctlOk("eval", "rabbit_alarm:set_alarm({{resource_limit, disk, node()}, []}).");
        assertThat(set.out()).isEqualTo("ok\n");
        assertThat(broker.broker().alarms().active()).containsExactly(Resource.DISK);
        ctlOk("eval", "rabbit_alarm:set_alarm({{resource_limit, memory, node()}, []}).");
        assertThat(broker.broker().alarms().active()).containsExactlyInAnyOrder(Resource.DISK, Resource.MEMORY);
        ctlOk("eval", "rabbit_alarm:clear_alarm({resource_limit, disk, node()}).");
        ctlOk("eval", "rabbit_alarm:clear_alarm({resource_limit, memory, node()}).");
        assertThat(broker.broker().alarms().any()).isFalse();
        Result other = ctl(broker.managementPort(), "eval", "rabbit_alarm:set_alarm({{resource_limit, cpu, node()}, []}).");
        assertThat(other.code()).isEqualTo(65);
        assertThat(other.err()).contains("Evaluation failed");
    }

    @Test
    void whatRabbitmqctlRefusesIsRefusedWithItsReasons() {
        long before = broker.broker().resourceMonitor().memoryLimit();
        assertRefused("The threshold should be a fraction between 0.0 and 1.0", "set_vm_memory_high_watermark", "1.5");
        assertRefused("The threshold should be an integer.", "set_vm_memory_high_watermark", "absolute", "1.5GB");
        assertRefused("Invalid units.", "set_vm_memory_high_watermark", "absolute", "10XB");
        assertRefused("Not enough arguments.", "set_vm_memory_high_watermark", "absolute");
        assertRefused("Too many arguments.", "set_vm_memory_high_watermark", "0.1", "0.2");
        assertRefused("Bad argument.", "set_disk_free_limit", "mem_relative", "-1");
        assertRefused("Bad argument.", "set_disk_free_limit", "lots");
        assertThat(broker.broker().resourceMonitor().memoryLimit()).isEqualTo(before);
    }

    private static void assertRefused(String reason, String... args) {
        Result result = ctl(broker.managementPort(), args);
        assertThat(result.code()).as(result.out()).isEqualTo(64);
        assertThat(result.err()).contains(reason);
    }
}
