package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The container: what routing and queues read, stored forms, and conversions made once and released once. */
@ExtendWith(LeakDetection.class)
class MessageContainerTest {

    private static BasicProperties persistent(int priority, String expiration, Map<String, Object> headers) {
        return new BasicProperties("text/plain", null, headers, 2, priority, null, null, expiration, "id-1", null,
            null, null, null, null);
    }

    @Test
    void anAmqp091MessageReadsWhatQueuesNeedFromItsProperties() {
        Amqp091Message m = amqp091(persistent(6, "2500", Map.of("h", 1L)), "body".getBytes());
        try {
            assertThat(m.format()).isEqualTo(MessageFormat.AMQP_0_9_1);
            assertThat(m.durable()).isTrue();
            assertThat(m.priority()).isEqualTo(6);
            assertThat(m.ttl()).isEqualTo(2500);
            assertThat(m.header("h")).isEqualTo(1L);
            assertThat(m.size()).isEqualTo(m.propertyBytes().readableBytes() + 4);
            assertThat(m.annotations()).containsEntry("x-exchange", "amq.direct").containsEntry("x-routing-key", "rk");
            assertThat(m.toAmqp091()).isSameAs(m);
        } finally {
            m.release();
        }
        Amqp091Message plain = amqp091(BasicProperties.EMPTY, new byte[0]);
        assertThat(plain.durable()).as("delivery-mode absent: transient, as in RabbitMQ").isFalse();
        assertThat(plain.priority()).as("no priority: 0, as RabbitMQ").isZero();
        assertThat(plain.ttl()).isEqualTo(-1);
        assertThat(plain.headers()).isEmpty();
        plain.release();
    }

    @Test
    void anAmqp10MessagesHeadersAreItsApplicationPropertiesInNeutralValues() {
        Header header = new Header();
        header.setDurable(false);
        Amqp10Message m = amqp10(header, new ApplicationProperties(Map.of("u", UnsignedInteger.valueOf(5), "s",
            "x", "b", new Binary(new byte[] {1}))), new Data(new Binary(new byte[0])));
        try {
            assertThat(m.durable()).isFalse();
            assertThat(m.headers()).containsEntry("u", 5L).containsEntry("s", "x")
                .containsEntry("b", io.skiffmq.codec.Bytes.wrap(new byte[] {1}));
            assertThat(m.toAmqp10()).isSameAs(m);
        } finally {
            m.release();
        }
    }

    @Test
    void storedFormsReadBackExactly() throws Exception {
        Amqp10Message a = amqp10(new Header(), new Data(new Binary("x".getBytes())),
            new Footer(Map.of(Symbol.valueOf("crc"), 7L)));
        Amqp091Message b = amqp091(persistent(1, null, Map.of("k", "v")), "y".getBytes());
        for (Message m : List.of(a, b)) {
            ByteBuf stored = Unpooled.buffer();
            m.writeStored(stored);
            assertThat(stored.readableBytes()).isEqualTo(m.storedSize());
            byte[] bytes = ByteBufUtil.getBytes(stored);
            Message back = Message.readStored(m.format(), stored, true, m.exchange(), m.routingKey());
            try {
                assertThat(back.format()).isEqualTo(m.format());
                assertThat(back.getClass()).isEqualTo(m.getClass());
                ByteBuf again = Unpooled.buffer();
                back.writeStored(again);
                assertThat(ByteBufUtil.getBytes(again)).isEqualTo(bytes);
                again.release();
                assertThat(back.durable()).isEqualTo(m.durable());
                assertThat(back.headers()).isEqualTo(m.headers());
            } finally {
                back.release();
                m.release();
            }
        }
    }

    @Test
    void damagedStoredBytesAreATypedErrorAndReleased() {
        ByteBuf tooLong = Unpooled.buffer().writeInt(1000).writeShort(0);
        assertThatThrownBy(() -> Message.readStored(MessageFormat.AMQP_0_9_1, tooLong, true, "", "q"))
            .isInstanceOf(MalformedMessageException.class);
        assertThat(tooLong.refCnt()).isZero();
        ByteBuf cut = Unpooled.buffer().writeInt(2).writeByte(0x10); // delivery-mode flag, no octet
        cut.writeByte(0);
        assertThatThrownBy(() -> Message.readStored(MessageFormat.AMQP_0_9_1, cut, true, "", "q"))
            .isInstanceOf(MalformedMessageException.class);
        assertThat(cut.refCnt()).isZero();
        ByteBuf notAmqp = Unpooled.buffer().writeByte(0x77);
        assertThatThrownBy(() -> Message.readStored(MessageFormat.AMQP_1_0, notAmqp, true, "", "q"))
            .isInstanceOf(MalformedMessageException.class);
        assertThat(notAmqp.refCnt()).isZero();
    }

    @Test
    void aConversionIsMadeOnceAndReleasedWithTheMessage() {
        Amqp091Message m = amqp091(persistent(4, null, null), "b".getBytes());
        Amqp10Message first = m.toAmqp10();
        assertThat(m.toAmqp10()).isSameAs(first);
        assertThat(first.refCnt()).isEqualTo(1);
        m.release();
        assertThat(first.refCnt()).isZero();

        Amqp10Message n = amqp10(new Data(new Binary("c".getBytes())));
        Amqp091Message other = n.toAmqp091();
        assertThat(n.toAmqp091()).isSameAs(other);
        n.release();
        assertThat(other.refCnt()).isZero();
    }

    @Test
    void queuesOnManyThreadsConvertingAtOnceGetOneConversion() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 50; round++) {
                Amqp091Message m = amqp091(persistent(4, null, Map.of("k", "v")), ("m" + round).getBytes());
                CountDownLatch start = new CountDownLatch(1);
                List<Future<Amqp10Message>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    results.add(threads.submit(() -> {
                        start.await();
                        return m.toAmqp10();
                    }));
                }
                start.countDown();
                Amqp10Message one = results.get(0).get();
                for (Future<Amqp10Message> f : results) {
                    assertThat(f.get()).isSameAs(one);
                }
                assertThat(one.headers()).containsEntry("k", "v");
                m.release();
                assertThat(one.refCnt()).isZero();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void theLastReferenceFreesTheMessageAndNothingIsFreedTwice() {
        Amqp10Message m = amqp10(new Data(new Binary("r".getBytes())));
        ByteBuf bytes = m.bytes();
        assertThat(m.retain()).isSameAs(m);
        assertThat(m.retain(2).refCnt()).isEqualTo(4);
        assertThat(m.release(2)).isFalse();
        assertThat(m.release()).isFalse();
        assertThat(bytes.refCnt()).as("still referenced once").isOne();
        assertThat(m.release()).isTrue();
        assertThat(m.refCnt()).isZero();
        assertThat(bytes.refCnt()).isZero();
        assertThatThrownBy(m::release).isInstanceOf(io.netty.util.IllegalReferenceCountException.class);
        assertThatThrownBy(m::retain).isInstanceOf(io.netty.util.IllegalReferenceCountException.class);
        assertThat(bytes.refCnt()).as("freed once").isZero();
    }

    @Test
    void referencesTakenAndDroppedOnManyThreadsAddUp() throws Exception {
        Amqp10Message m = amqp10(new Data(new Binary("t".getBytes())));
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                done.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        m.retain();
                        m.release();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            assertThat(m.refCnt()).isOne();
            assertThat(m.bytes().refCnt()).isOne();
        } finally {
            threads.shutdownNow();
            m.release();
        }
    }
}
