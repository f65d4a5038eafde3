package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An AMQP 0-9-1 message's death history to the millisecond, as RabbitMQ 4 keeps it: beside the {@code x-death}
 * header (seconds, first time only), converted to {@code x-opt-deaths}, and through the stored form, whose version 1
 * (before the history was stored) still reads back, to the second. A publisher's own {@code x-death} is no history.
 */
@ExtendWith(LeakDetection.class)
class Amqp091DeathTimesTest {
    private static final Instant FIRST = Instant.ofEpochMilli(1_700_000_000_123L);
    private static final Instant LAST = FIRST.plusMillis(1_500);

    /** Published to "q", rejected there twice: at {@link #FIRST} and {@link #LAST}. */
    private static Amqp091Message diedTwice() {
        Amqp091Message published = amqp091(new BasicProperties(null, null, Map.of("app", "kept"), 2, null, null,
            null, null, null, null, null, null, null, null), "twice".getBytes());
        Amqp091Message once = published.deadLettered("rejected", "q", FIRST, "", "q");
        published.release();
        Amqp091Message twice = once.deadLettered("rejected", "q", LAST, "", "q");
        once.release();
        return twice;
    }

    private static void assertPrecise(Death d) {
        assertThat(d.queue()).isEqualTo("q");
        assertThat(d.reason()).isEqualTo("rejected");
        assertThat(d.count()).isEqualTo(2);
        assertThat(d.firstTime()).isEqualTo(FIRST);
        assertThat(d.lastTime()).isEqualTo(LAST);
        assertThat(d.exchange()).isEqualTo("amq.direct");
        assertThat(d.routingKeys()).containsExactly("rk");
    }

    @Test
    @SuppressWarnings("unchecked")
    void aDeadLetteredMessageKeepsFirstAndLastTimeToTheMillisecondAndXDeathInSeconds() {
        Amqp091Message m = diedTwice();
        try {
            assertThat(m.deaths()).singleElement().satisfies(Amqp091DeathTimesTest::assertPrecise);
            List<Map<String, Object>> xDeath = (List<Map<String, Object>>) m.headers().get(Death.X_DEATH);
            assertThat(xDeath).singleElement().satisfies(t -> {
                assertThat(t.get("time")).as("RabbitMQ's x-death: the first time, in seconds")
                    .isEqualTo(Instant.ofEpochSecond(FIRST.getEpochSecond()));
                assertThat(t.get("count")).isEqualTo(2L);
            });
            assertThat(m.headers()).containsEntry("app", "kept");
            assertThat(m.toAmqp10().deaths()).as("x-opt-deaths, converted")
                .singleElement().satisfies(Amqp091DeathTimesTest::assertPrecise);
        } finally {
            m.release();
        }
    }

    @Test
    void theStoredFormKeepsTheTimesAndReadsBackToTheSameBytes() throws Exception {
        Amqp091Message m = diedTwice();
        ByteBuf stored = Unpooled.buffer();
        m.writeStored(stored);
        assertThat(stored.readableBytes()).isEqualTo(m.storedSize());
        assertThat((int) stored.getUnsignedByte(0)).as("version 2").isEqualTo(0x82);
        byte[] bytes = ByteBufUtil.getBytes(stored);
        Message back = Message.readStored(MessageFormat.AMQP_0_9_1, stored, true, m.exchange(), m.routingKey());
        try {
            assertThat(back.deaths()).singleElement().satisfies(Amqp091DeathTimesTest::assertPrecise);
            assertThat(ByteBufUtil.getBytes(((Amqp091Message) back).propertyBytes()))
                .isEqualTo(ByteBufUtil.getBytes(m.propertyBytes()));
            ByteBuf again = Unpooled.buffer();
            back.writeStored(again);
            assertThat(ByteBufUtil.getBytes(again)).isEqualTo(bytes);
            again.release();
        } finally {
            back.release();
            m.release();
        }
    }

    @Test
    void aMessageThatNeverDiedIsStoredInVersion1AsBefore() {
        Amqp091Message m = amqp091(BasicProperties.EMPTY, "plain".getBytes());
        ByteBuf stored = Unpooled.buffer();
        m.writeStored(stored);
        assertThat(stored.readInt()).isEqualTo(m.propertyBytes().readableBytes());
        assertThat(stored.readableBytes()).isEqualTo(m.size());
        stored.release();
        m.release();
    }

    @Test
    void aVersion1RecordOfADeadLetteredMessageReadsBackToTheSecond() throws Exception {
        Amqp091Message m = diedTwice();
        ByteBuf old = Unpooled.buffer(); // as the previous version stored it: [u32 length | properties | body]
        old.writeInt(m.propertyBytes().readableBytes()).writeBytes(m.propertyBytes().duplicate())
            .writeBytes(m.body().duplicate());
        m.release();
        Message back = Message.readStored(MessageFormat.AMQP_0_9_1, old, true, "amq.direct", "rk", true);
        try {
            Instant second = Instant.ofEpochSecond(FIRST.getEpochSecond());
            assertThat(back.deaths()).singleElement().satisfies(d -> {
                assertThat(d.count()).isEqualTo(2);
                assertThat(d.firstTime()).isEqualTo(second);
                assertThat(d.lastTime()).as("x-death holds the first time only").isEqualTo(second);
            });
            Message again = back.deadLettered("expired", "other", LAST.plusMillis(7), "", "other");
            try {
                assertThat(again.deaths()).extracting(Death::queue, Death::firstTime, Death::lastTime)
                    .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("other", LAST.plusMillis(7), LAST.plusMillis(7)),
                        org.assertj.core.groups.Tuple.tuple("q", second, second));
            } finally {
                again.release();
            }
        } finally {
            back.release();
        }
    }

    /** A publisher's {@code x-death} header: 20 tables of 5 queues, none with a count or a time. */
    private static List<Object> publishersXDeath() {
        List<Object> tables = new java.util.ArrayList<>();
        for (String q : List.of("q97", "q97", "q97", "q98", "q99")) {
            for (int i = 0; i < 4; i++) {
                tables.add(Map.of("reason", "expired", "queue", q, "exchange", "fanout0",
                    "routing-keys", List.of("rk-1", "rk-2"), "random", "r" + i));
            }
        }
        return tables;
    }

    /**
     * RabbitMQ 4 reads no history from a publisher's {@code x-death} header ({@code mc_amqpl:init/1};
     * {@code mc:record_death/4} starts from the container's own {@code deaths}): the header travels as sent until
     * the message dies, then the broker's history replaces it, and the first death is that one. The Java client's
     * {@code XDeathHeaderGrowth.handlingOfXDeathHeadersFromEarlierVersions} expects this of 3.13 and later.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aPublishersXDeathHeaderIsNoHistoryAndIsReplacedWhenTheMessageDies() {
        Amqp091Message published = amqp091(new BasicProperties(null, null, Map.of(Death.X_DEATH, publishersXDeath(),
            "x-first-death-queue", "q97"), 2, null, null, null, null, null, null, null, null, null, null),
            "from a publisher".getBytes());
        try {
            assertThat(published.deaths()).isEmpty();
            assertThat((List<Object>) published.headers().get(Death.X_DEATH)).as("travels as sent").hasSize(20);
            assertThat(published.toAmqp10().deaths()).as("converted, still no history").isEmpty();
            Message once = published.deadLettered("rejected", "q1", FIRST, "", "q1");
            try {
                assertThat(once.deaths()).extracting(Death::queue, Death::count)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("q1", 1L));
                Map<String, Object> headers = ((Amqp091Message) once).headers();
                assertThat((List<Map<String, Object>>) headers.get(Death.X_DEATH)).singleElement()
                    .satisfies(t -> assertThat(t).containsEntry("queue", "q1").containsEntry("count", 1L));
                assertThat(headers).containsEntry("x-first-death-queue", "q1");
                assertThat(once.toAmqp10().deaths()).hasSize(1);
            } finally {
                once.release();
            }
        } finally {
            published.release();
        }
    }

    /**
     * A header stored before the history was (record version 3) is read as the history, and only its whole tables
     * count: one without a count or a time is left out, as RabbitMQ 3.13 leaves it out, not given count 1 and
     * 1970. Void values from a publisher (an empty table) count for nothing either.
     */
    @Test
    void anOldStoredHeaderCountsOnlyItsWholeTables() throws Exception {
        Map<String, Object> voids = new java.util.HashMap<>();
        for (String key : List.of("queue", "reason", "count", "time", "exchange", "original-expiration")) {
            voids.put(key, null);
        }
        voids.put("routing-keys", java.util.Arrays.asList(null, "rk"));
        Map<String, Object> whole = Map.of("queue", "q", "reason", "expired", "count", 3L, "time",
            Instant.ofEpochSecond(FIRST.getEpochSecond()), "exchange", "", "routing-keys", java.util.Arrays.asList(null, "rk"));
        List<Object> tables = new java.util.ArrayList<>(publishersXDeath());
        tables.add(voids);
        tables.add(whole);
        Amqp091Message m = amqp091(new BasicProperties(null, null, Map.of(Death.X_DEATH, tables), 2, null, null, null,
            null, null, null, null, null, null, null), "old".getBytes());
        ByteBuf old = Unpooled.buffer(); // the stored form before record version 4
        old.writeInt(m.propertyBytes().readableBytes()).writeBytes(m.propertyBytes().duplicate())
            .writeBytes(m.body().duplicate());
        m.release();
        Message back = Message.readStored(MessageFormat.AMQP_0_9_1, old, true, "", "q", true);
        try {
            assertThat(back.deaths()).singleElement().satisfies(d -> {
                assertThat(d.queue()).isEqualTo("q");
                assertThat(d.count()).isEqualTo(3);
                assertThat(d.routingKeys()).as("a void routing key is none").containsExactly("rk");
            });
        } finally {
            back.release();
        }
    }

    @Test
    void aDamagedVersion2RecordIsATypedErrorAndReleased() {
        Amqp091Message m = diedTwice();
        ByteBuf stored = Unpooled.buffer();
        m.writeStored(stored);
        m.release();
        ByteBuf cut = stored.copy(0, 20);
        ByteBuf unknown = stored.copy().setByte(0, 0x83);
        stored.release();
        for (ByteBuf damaged : List.of(cut, unknown)) {
            assertThatThrownBy(() -> Message.readStored(MessageFormat.AMQP_0_9_1, damaged, true, "", "q"))
                .isInstanceOf(MalformedMessageException.class);
            assertThat(damaged.refCnt()).isZero();
        }
    }
}
