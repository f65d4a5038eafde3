package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A stream consumer's link in raw frames, as RabbitMQ 4 answers it ({@code rabbit_amqp_session:parse_filters/3},
 * {@code rabbit_stream_queue}): which stream filters are echoed, an interval refused, the publisher's bytes delivered
 * with {@code x-stream-offset} annotated, settlements that only settle, and pre-settled consumers.
 */
@ExtendWith(LeakDetection.class)
class Amqp10StreamRawTest {
    private static final Symbol OFFSET_SPEC = Symbol.valueOf("rabbitmq:stream-offset-spec");
    private static final Symbol FILTER = Symbol.valueOf("rabbitmq:stream-filter");
    private static final Symbol MATCH_UNFILTERED = Symbol.valueOf("rabbitmq:stream-match-unfiltered");
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }


    private static String stream(String prefix) {
        String name = unique(prefix);
        broker.vhost("/").declareQueue(name, true, Map.of("x-queue-type", "stream"));
        return name;
    }

    private static Source source(String queue, Map<Symbol, Object> filters) {
        Source source = RawClient.source("/queues/" + queue);
        source.setFilter(filters);
        return source;
    }

    private static Map<Symbol, Object> first() {
        return Map.of(OFFSET_SPEC, new DescribedFilter(OFFSET_SPEC, "first"));
    }

    /** Publishes each message, waiting for its acceptance (so each is a chunk). */
    private static void publish(String stream, byte[]... messages) throws Exception {
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "/queues/" + stream);
            publisher.readUntil(Flow.class);
            for (int i = 0; i < messages.length; i++) {
                publisher.transfer(0, i, messages[i], false);
                assertThat(publisher.readUntil(Disposition.class).getState()).isInstanceOf(Accepted.class);
            }
        }
    }

    private static byte[] body(String text) {
        return Messages.data(text, null);
    }

    private static Map<?, ?> annotations(byte[] payload) {
        return Messages.decode(payload).getMessageAnnotations().getValue();
    }

    @Test
    void theStreamFiltersTakenAreEchoedAsSentOnAStreamOnly() throws Exception {
        String stream = stream("echo");
        broker.vhost("/").declareQueue("echo-classic", false, Map.of());
        Map<Symbol, Object> filters = new LinkedHashMap<>();
        filters.put(Symbol.valueOf("from"), new DescribedFilter(OFFSET_SPEC, 42L));
        filters.put(Symbol.valueOf("values"), new DescribedFilter(FILTER, List.of("a", Symbol.valueOf("b"), "c")));
        filters.put(MATCH_UNFILTERED, new DescribedFilter(MATCH_UNFILTERED, true));
        filters.put(Symbol.valueOf("negative"), new DescribedFilter(OFFSET_SPEC, -1L));
        filters.put(Symbol.valueOf("not-a-boolean"), new DescribedFilter(MATCH_UNFILTERED, "yes"));
        filters.put(FILTER, "not described");
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach onStream = client.attachReceiver(0, source(stream, filters), false);
            Map<Symbol, Object> echoed = ((Source) onStream.getSource()).getFilter();
            assertThat(echoed).as("the filters of the right types, described, in the client's order")
                .containsOnlyKeys(Symbol.valueOf("from"), Symbol.valueOf("values"), MATCH_UNFILTERED);
            assertThat(List.copyOf(echoed.keySet())).containsExactly(Symbol.valueOf("from"),
                Symbol.valueOf("values"), MATCH_UNFILTERED);
            DescribedType from = (DescribedType) echoed.get(Symbol.valueOf("from"));
            assertThat(from.getDescriptor()).isEqualTo(OFFSET_SPEC);
            assertThat(from.getDescribed()).isEqualTo(42L);

            Attach onClassic = client.attachReceiver(1, source("echo-classic", filters), false);
            assertThat(((Source) onClassic.getSource()).getFilter()).as("a classic queue honours none").isNull();
        }
        broker.vhost("/").deleteQueue(stream);
        broker.vhost("/").deleteQueue("echo-classic");
    }

    @Test
    void anIntervalThatIsNoneRefusesTheLinkAsRabbitMqDoes() throws Exception {
        String stream = stream("bad-interval");
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach refusal = client.attachReceiver(0, source(stream,
                Map.of(OFFSET_SPEC, new DescribedFilter(OFFSET_SPEC, Symbol.valueOf("soon")))), false);
            assertThat(refusal.getSource()).as("no terminus: the link is refused").isNull();
            Detach detach = client.read().as(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(Symbol.valueOf("amqp:precondition-failed"));
            assertThat(detach.getError().getDescription()).isEqualTo("failed consuming from stream queue '" + stream
                + "' in vhost '/': invalid_max_age");
        }
        broker.vhost("/").deleteQueue(stream);
    }

    @Test
    void aDeliveryIsThePublishersBareMessageAndFooterWithItsOffsetAnnotated() throws Exception {
        String stream = stream("bytes");
        Message message = Message.Factory.create();
        Header header = new Header();
        header.setDurable(true);
        header.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) 7));
        message.setHeader(header);
        message.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-kept"), "yes",
            Symbol.valueOf("x-stream-offset"), 999L)));
        Properties properties = new Properties();
        properties.setMessageId("id-1");
        properties.setContentType(Symbol.valueOf("text/plain"));
        message.setProperties(properties);
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("n", UnsignedInteger.valueOf(42));
        message.setApplicationProperties(new ApplicationProperties(app));
        message.setBody(new Data(new Binary("kept exactly".getBytes(StandardCharsets.UTF_8))));
        message.setFooter(new Footer(Map.of(Symbol.valueOf("x-opt-sum"), 7L)));
        byte[] sent = Messages.encode(message);
        Message bare = Message.Factory.create();
        bare.setProperties(properties);
        bare.setApplicationProperties(message.getApplicationProperties());
        bare.setBody(message.getBody());
        bare.setFooter(message.getFooter());
        byte[] bareAndFooter = Messages.encode(bare);
        assertThat(Arrays.copyOfRange(sent, sent.length - bareAndFooter.length, sent.length)).isEqualTo(bareAndFooter);

        publish(stream, body("zero"), sent);
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, source(stream, Map.of(OFFSET_SPEC, new DescribedFilter(OFFSET_SPEC,
                UnsignedInteger.ONE))), false);
            client.flow(0, 0, 10, false, false);
            byte[] received = client.read().payload();
            assertThat(Arrays.copyOfRange(received, received.length - bareAndFooter.length, received.length))
                .as("the bare message and footer as sent").isEqualTo(bareAndFooter);
            Message got = Messages.decode(received);
            assertThat(got.getMessageAnnotations().getValue())
                .containsEntry(Symbol.valueOf("x-stream-offset"), 1L)
                .containsEntry(Symbol.valueOf("x-opt-kept"), "yes")
                .containsEntry(Symbol.valueOf("x-exchange"), "")
                .containsEntry(Symbol.valueOf("x-routing-key"), stream);
            assertThat(got.getHeader().getPriority().intValue()).isEqualTo(7);
            assertThat(got.getHeader().getFirstAcquirer()).isTrue();
            assertThat(client.silentFor(200)).as("the offset skips what is below it").isTrue();
        }
        broker.vhost("/").deleteQueue(stream);
    }

    private static Disposition settle(long id, DeliveryState outcome) {
        Disposition disposition = new Disposition();
        disposition.setRole(Role.RECEIVER);
        disposition.setFirst(UnsignedInteger.valueOf(id));
        disposition.setLast(UnsignedInteger.valueOf(id));
        disposition.setSettled(true);
        disposition.setState(outcome);
        return disposition;
    }

    private static long offsetOf(RawClient.Frame frame) {
        return (Long) annotations(frame.payload()).get(Symbol.valueOf("x-stream-offset"));
    }

    @Test
    void settlingOnlySettlesWhateverTheOutcomeAndCreditComesFromTheConsumer() throws Exception {
        String stream = stream("settle");
        publish(stream, body("0"), body("1"), body("2"), body("3"), body("4"));
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, source(stream, first()), false);
            client.flow(0, 0, 3, false, false);
            RawClient.Frame[] frames = {client.read(), client.read(), client.read()};
            for (int i = 0; i < 3; i++) {
                assertThat(offsetOf(frames[i])).isEqualTo(i);
                assertThat(((Transfer) frames[i].body()).getSettled()).isNotEqualTo(Boolean.TRUE);
            }
            Modified modified = new Modified();
            modified.setDeliveryFailed(true);
            DeliveryState[] outcomes = {Released.getInstance(), modified, new Rejected()};
            for (int i = 0; i < 3; i++) {
                client.write(0, settle(((Transfer) frames[i].body()).getDeliveryId().longValue(), outcomes[i]));
            }
            assertThat(client.silentFor(300)).as("nothing redelivered, no credit given back").isTrue();
            client.flow(0, 3, 5, false, false);
            assertThat(offsetOf(client.read())).isEqualTo(3);
            assertThat(offsetOf(client.read())).isEqualTo(4);
        }
        broker.vhost("/").deleteQueue(stream);
    }

    @Test
    void aPreSettledConsumerIsServedAsRabbitMqServesIt() throws Exception {
        String stream = stream("settled");
        publish(stream, body("0"), body("1"));
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach reply = client.attachReceiver(0, source(stream, first()), true);
            assertThat(reply.getSndSettleMode()).isEqualTo(SenderSettleMode.SETTLED);
            client.flow(0, 0, 10, false, false);
            for (long i = 0; i < 2; i++) {
                RawClient.Frame frame = client.read();
                assertThat(((Transfer) frame.body()).getSettled()).isTrue();
                assertThat(offsetOf(frame)).isEqualTo(i);
            }
        }
        broker.vhost("/").deleteQueue(stream);
    }

    @Test
    void aSelectorAndAnOffsetTogetherReadFromTheOffsetWhatTheSelectorMatches() throws Exception {
        String stream = stream("selector");
        publish(stream, coloured("red", "r0"), coloured("blue", "b1"), coloured("red", "r2"));
        Map<Symbol, Object> filters = new LinkedHashMap<>();
        filters.put(OFFSET_SPEC, new DescribedFilter(OFFSET_SPEC, "first"));
        filters.put(Symbol.valueOf("jms-selector"), new DescribedFilter(Symbol.valueOf("apache.org:selector-filter:string"),
            "colour = 'red'"));
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach reply = client.attachReceiver(0, source(stream, filters), true);
            assertThat(((Source) reply.getSource()).getFilter()).containsOnlyKeys(OFFSET_SPEC,
                Symbol.valueOf("jms-selector"));
            client.flow(0, 0, 10, false, false);
            RawClient.Frame red0 = client.read();
            RawClient.Frame red2 = client.read();
            assertThat(Messages.body(red0.payload())).isEqualTo("r0");
            assertThat(offsetOf(red2)).isEqualTo(2);
        }
        broker.vhost("/").deleteQueue(stream);
    }

    private static byte[] coloured(String colour, String text) {
        Message message = Message.Factory.create();
        message.setApplicationProperties(new ApplicationProperties(Map.of("colour", colour)));
        message.setBody(new Data(new Binary(text.getBytes(StandardCharsets.UTF_8))));
        return Messages.encode(message);
    }
}
