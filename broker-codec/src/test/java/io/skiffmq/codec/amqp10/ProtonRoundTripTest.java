package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Messages encoded by proton-j's {@code Message.encode}, for every combination of the seven optional parts
 * (header, delivery-annotations, message-annotations, properties, application-properties, footer: each
 * present or not; body: none, data, amqp-sequence or amqp-value): 256 messages.
 */
class ProtonRoundTripTest {

    static IntStream combinations() {
        return IntStream.range(0, 256);
    }

    private static Message build(int combination) {
        Message message = Message.Factory.create();
        if ((combination & 1) != 0) {
            Header header = new Header();
            header.setDurable(true);
            header.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) 9));
            header.setTtl(UnsignedInteger.valueOf(60_000));
            header.setDeliveryCount(UnsignedInteger.valueOf(2));
            message.setHeader(header);
        }
        if ((combination & 2) != 0) {
            message.setDeliveryAnnotations(new DeliveryAnnotations(Map.of(Symbol.valueOf("x-opt-hop"), "1")));
        }
        if ((combination & 4) != 0) {
            Map<Symbol, Object> annotations = new LinkedHashMap<>();
            annotations.put(Symbol.valueOf("x-opt-partition"), 3);
            annotations.put(Symbol.valueOf("x-exchange"), "client-claims-this");
            message.setMessageAnnotations(new MessageAnnotations(annotations));
        }
        if ((combination & 8) != 0) {
            Properties properties = new Properties();
            properties.setMessageId(UUID.fromString("3f2504e0-4f89-11d3-9a0c-0305e82c3301"));
            properties.setTo("/exchanges/amq.topic/a.b");
            properties.setSubject("greeting");
            properties.setCorrelationId(UnsignedLong.valueOf(77));
            properties.setContentType(Symbol.valueOf("text/plain"));
            properties.setGroupSequence(UnsignedInteger.valueOf(5));
            message.setProperties(properties);
        }
        if ((combination & 16) != 0) {
            Map<String, Object> props = new LinkedHashMap<>();
            props.put("colour", "blue");
            props.put("count", 42L);
            props.put("flag", true);
            message.setApplicationProperties(new ApplicationProperties(props));
        }
        if ((combination & 32) != 0) {
            message.setFooter(new Footer(Map.of(Symbol.valueOf("x-opt-crc-32"), UnsignedInteger.valueOf(123456))));
        }
        switch (combination >> 6) {
            case 1 -> message.setBody(new Data(new Binary(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})));
            case 2 -> message.setBody(new AmqpSequence(List.of(1, "two", 3L)));
            case 3 -> message.setBody(new AmqpValue(Map.of("k", List.of(1, 2))));
            default -> {
            }
        }
        return message;
    }

    private static byte[] encode(Message message) {
        byte[] bytes = new byte[4096];
        int length = message.encode(bytes, 0, bytes.length);
        return Arrays.copyOf(bytes, length);
    }

    @ParameterizedTest
    @MethodSource("combinations")
    void indexesFieldsAndReEmitsAsProtonEncodedThem(int combination) throws AmqpDecodeException {
        Message original = build(combination);
        byte[] bytes = encode(original);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer().writeBytes(bytes);
        try {
            MessageSections m = MessageSections.scan(buf);
            assertThat(m.has(SectionCode.HEADER)).isEqualTo(original.getHeader() != null);
            assertThat(m.has(SectionCode.DELIVERY_ANNOTATIONS)).isEqualTo(original.getDeliveryAnnotations() != null);
            assertThat(m.has(SectionCode.MESSAGE_ANNOTATIONS)).isEqualTo(original.getMessageAnnotations() != null);
            assertThat(m.has(SectionCode.PROPERTIES)).isEqualTo(original.getProperties() != null);
            assertThat(m.has(SectionCode.APPLICATION_PROPERTIES)).isEqualTo(original.getApplicationProperties() != null);
            assertThat(m.has(SectionCode.FOOTER)).isEqualTo(original.getFooter() != null);
            assertThat(m.bodyCode()).isEqualTo(switch (combination >> 6) {
                case 1 -> SectionCode.DATA;
                case 2 -> SectionCode.AMQP_SEQUENCE;
                case 3 -> SectionCode.AMQP_VALUE;
                default -> -1;
            });

            assertThat(m.durable()).isEqualTo(original.isDurable());
            assertThat(m.priority()).isEqualTo(original.getPriority());
            assertThat(m.ttl()).isEqualTo(original.getHeader() == null ? -1 : original.getTtl());
            assertThat(m.deliveryCount()).isEqualTo(original.getDeliveryCount());
            assertThat(m.to()).isEqualTo(original.getAddress());
            assertThat(m.subject()).isEqualTo(original.getSubject());
            assertThat(m.messageId()).isEqualTo(original.getMessageId());
            assertThat(m.correlationId()).isEqualTo(original.getCorrelationId());
            assertThat((Object) m.contentType()).isEqualTo(original.getProperties() == null ? null
                : original.getProperties().getContentType());
            assertThat(m.groupSequence()).isEqualTo(original.getProperties() == null ? -1 : 5);
            if (original.getApplicationProperties() != null) {
                assertThat(m.applicationProperties()).isEqualTo(original.getApplicationProperties().getValue());
                assertThat(m.applicationProperty("count")).isEqualTo(42L);
            }
            if (original.getMessageAnnotations() != null) {
                assertThat(m.messageAnnotations()).isEqualTo(original.getMessageAnnotations().getValue());
                assertThat(m.messageAnnotation("x-opt-partition")).isEqualTo(3);
            }
            if (original.getFooter() != null) {
                assertThat(m.footer()).isEqualTo(original.getFooter().getValue());
            }

            BrokerAnnotations added = new BrokerAnnotations().put("x-exchange", "amq.topic").put("x-routing-key", "a.b");
            ByteBuf delivered = DeliveryEncoder.encode(PooledByteBufAllocator.DEFAULT, m, m.durable(), m.priority(),
                m.ttl(), false, m.deliveryCount() + 1, added);
            try {
                byte[] out = ByteBufUtil.getBytes(delivered);
                int bare = m.bareMessageStart();
                assertThat(Arrays.copyOfRange(out, out.length - (bytes.length - bare), out.length))
                    .isEqualTo(Arrays.copyOfRange(bytes, bare, bytes.length));

                Message received = Message.Factory.create();
                received.decode(out, 0, out.length);
                assertThat(received.getDeliveryAnnotations()).isNull();
                assertThat(received.getDeliveryCount()).isEqualTo(original.getDeliveryCount() + 1);
                assertThat(received.isDurable()).isEqualTo(original.isDurable());
                assertThat(received.getPriority()).isEqualTo(original.getPriority());
                Map<Symbol, Object> annotations = received.getMessageAnnotations().getValue();
                assertThat(annotations).containsEntry(Symbol.valueOf("x-exchange"), "amq.topic")
                    .containsEntry(Symbol.valueOf("x-routing-key"), "a.b");
                if (original.getMessageAnnotations() != null) {
                    assertThat(annotations).containsEntry(Symbol.valueOf("x-opt-partition"), 3).hasSize(3);
                }
                assertThat(received.getProperties() == null ? null : received.getProperties().getTo())
                    .isEqualTo(original.getAddress());
                assertThat(received.getApplicationProperties() == null ? null
                    : received.getApplicationProperties().getValue())
                    .isEqualTo(original.getApplicationProperties() == null ? null
                        : original.getApplicationProperties().getValue());
                assertThat(String.valueOf(received.getBody())).isEqualTo(String.valueOf(original.getBody()));
                assertThat((Object) (received.getFooter() == null ? null : received.getFooter().getValue()))
                    .isEqualTo(original.getFooter() == null ? null : original.getFooter().getValue());
            } finally {
                delivered.release();
            }
        } finally {
            buf.release();
        }
    }
}
