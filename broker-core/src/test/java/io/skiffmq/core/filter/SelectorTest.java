package io.skiffmq.core.filter;

import static io.skiffmq.core.TestMessages.amqp091;
import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Message;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SelectorTest {
    private final Message message = props();

    private static Message props() {
        Map<String, Object> p = new HashMap<>();
        p.put("color", "red");
        p.put("size", 10);
        p.put("weight", 2.5d);
        p.put("big", 5_000_000_000L);
        p.put("flag", true);
        p.put("code", "A_1%");
        p.put("small", (short) 3);
        return amqp10(new ApplicationProperties(p));
    }

    @AfterEach
    void release() {
        message.release();
    }

    private boolean matches(String selector) {
        return Selector.parse(selector).matches(message);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "color = 'red'|true", "color = 'blue'|false", "color <> 'blue'|true", "size = 10|true", "size > 9|true",
        "size >= 10.0|true", "size < 10|false", "size <= 10|true", "weight > 2|true", "weight = 2.5|true",
        "big > 4000000000|true", "small = 3|true", "size + 1 = 11|true", "size * 2 = 20|true", "size / 4 = 2|true",
        "size / 4.0 = 2.5|true", "-size = -10|true", "size - -1 = 11|true", "size / 0 = 1|false",
        "NOT (size / 0 = 1)|false", "flag|true", "flag = TRUE|true", "NOT flag|false", "flag AND size = 10|true",
        "size BETWEEN 5 AND 10|true", "size BETWEEN 11 AND 20|false", "size NOT BETWEEN 11 AND 20|true",
        "weight BETWEEN 2 AND 3|true", "color IN ('red', 'green')|true", "color NOT IN ('red', 'green')|false",
        "color IN ('blue')|false", "color LIKE 'r%'|true", "color LIKE 'r_d'|true", "color LIKE '_'|false",
        "color NOT LIKE '%e%'|false", "code LIKE 'A\\_1\\%' ESCAPE '\\'|true", "code LIKE 'A\\_2%' ESCAPE '\\'|false",
        "code LIKE 'A!_%' ESCAPE '!'|true", "code LIKE '%1%'|true", "code LIKE '%'|true", "code LIKE ''|false",
        "code LIKE 'A_1%_'|true", "code LIKE '%A'|false", "code LIKE '%%1%%'|true", "code LIKE 'A_1%__'|false",
        "code LIKE '_%_%_%_'|true", "code LIKE '_%_%_%_%_'|false", "color IS NULL|false", "missing IS NULL|true", "missing IS NOT NULL|false",
        "missing = 1|false", "NOT (missing = 1)|false", "missing = 1 OR size = 10|true", "missing = 1 AND size = 10|false",
        "missing = 1 AND size = 9|false", "NOT (missing = 1 AND size = 9)|true", "missing IN ('a')|false",
        "NOT (missing IN ('a'))|false", "missing LIKE 'a'|false", "color = 1|false", "NOT (color = 1)|true",
        "size = '10'|false", "color IN ('1')|false", "(size > 5 OR color = 'blue') AND NOT weight < 1|true",
        "size > 5 OR color = 'blue' AND weight < 1|true", "TRUE|true", "FALSE|false", "NULL IS NULL|true",
        "1 + 2 * 3 = 7|true", "(1 + 2) * 3 = 9|true", "7. = 7|true", ".5 = 0.5|true", "57.9E2 = 5790|true",
        "1e3 = 1000|true", "-9223372036854775808 < 0|true", "'it''s' = 'it''s'|true", "size > 9 and COLOR = 'red'|false",
        "size > 9 and color = 'red'|true", "size = 0xA|true", "size = 0XaL|true", "size = 012|true", "size = 10L|true",
        "weight = 2.5f|true", "weight = 2.5D|true", "size = 10d|true", "-0xFFFFFFFFFFFFFFFF = 1|true",
        "0x7FFFFFFFFFFFFFFF > 0|true", "0x8000000000000000 < 0|true", "JMSPriority = 4|true", "JMSDeliveryMode = 'NON_PERSISTENT'|true",
        "JMSType IS NULL|true", "JMSMessageID IS NULL|true", "JMSTimestamp IS NULL|true", "JMSExpiration = 0|true"})
    void evaluatesAgainstApplicationProperties(String selector, boolean expected) {
        assertThat(matches(selector)).as(selector).isEqualTo(expected);
    }

    @Test
    void jmsHeaderFieldsAreReadAsQpidJmsMapsThem() {
        Header header = new Header();
        header.setPriority(UnsignedByte.valueOf((byte) 7));
        header.setDurable(true);
        Properties properties = new Properties();
        properties.setMessageId("ID:abc-1");
        properties.setCorrelationId("order-42");
        properties.setSubject("invoice");
        properties.setCreationTime(java.util.Date.from(Instant.ofEpochMilli(1000)));
        properties.setUserId(new Binary("alice".getBytes()));
        properties.setGroupId("g1");
        properties.setGroupSequence(org.apache.qpid.proton.amqp.UnsignedInteger.valueOf(3));
        Message m = amqp10(header, properties);
        try {
            for (String s : new String[] {"JMSPriority = 7", "JMSPriority > 5", "JMSDeliveryMode = 'PERSISTENT'",
                    "JMSMessageID = 'ID:abc-1'", "JMSCorrelationID = 'order-42'", "JMSType = 'invoice'",
                    "JMSTimestamp = 1000", "JMSXUserID = 'alice'", "JMSXGroupID = 'g1'", "JMSXGroupSeq = 3"}) {
                assertThat(Selector.parse(s).matches(m)).as(s).isTrue();
            }
        } finally {
            m.release();
        }
    }

    @Test
    void idsOfOtherTypesReadWithQpidJmsPrefixes() {
        UUID uuid = UUID.randomUUID();
        assertThat(MessageFields.idString(uuid, true)).isEqualTo("ID:AMQP_UUID:" + uuid);
        assertThat(MessageFields.idString(UnsignedLong.valueOf(7), true)).isEqualTo("ID:AMQP_ULONG:7");
        assertThat(MessageFields.idString(new Binary(new byte[] {1, (byte) 0xab}), false))
            .isEqualTo("ID:AMQP_BINARY:01AB");
        assertThat(MessageFields.idString("plain", true)).isEqualTo("ID:AMQP_NO_PREFIX:plain");
        assertThat(MessageFields.idString("plain", false)).isEqualTo("plain");
    }

    @Test
    void amqp091HeadersAndPropertiesAreMatched() {
        BasicProperties p = new BasicProperties(null, null, Map.of("region", "eu", "count", 3), 2, 9, "corr-1",
            null, null, "m-1", Instant.ofEpochMilli(5000), "order", "bob", null, null);
        Message m = amqp091(p, new byte[] {1});
        try {
            for (String s : new String[] {"region = 'eu' AND count BETWEEN 1 AND 5", "JMSPriority = 9",
                    "JMSCorrelationID = 'corr-1'", "JMSType = 'order'", "JMSMessageID = 'm-1'", "JMSTimestamp = 5000",
                    "JMSDeliveryMode = 'PERSISTENT'", "JMSXUserID = 'bob'"}) {
                assertThat(Selector.parse(s).matches(m)).as(s).isTrue();
            }
            assertThat(Selector.parse("region = 'us'").matches(m)).isFalse();
        } finally {
            m.release();
        }
        Message plain = amqp091(BasicProperties.EMPTY, new byte[0]);
        try {
            assertThat(Selector.parse("JMSPriority = 4 AND JMSDeliveryMode = 'NON_PERSISTENT'").matches(plain))
                .isTrue();
        } finally {
            plain.release();
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "color = |position 8: expected a value, found the end of the selector",
        "color = 'red|position 9: string literal not closed",
        "color == 'red'|position 8: expected a value, found '='",
        "(size > 1|position 10: expected ')', found the end of the selector",
        "size > 1)|position 9: unexpected ')'",
        "size|", "5|position 1: expected a condition, found a number at '5'",
        "'a' AND TRUE|position 1: expected a condition, found a string at string 'a'",
        "color < 'b'|position 9: '<' compares numbers only, not string 'b'",
        "'x' + 1 = 2|position 1: expected a number, found string 'x'",
        "color IN ()|position 11: expected a string literal in the IN list, found ')'",
        "color IN ('a', 1)|position 16: expected a string literal in the IN list, found '1'",
        "5 LIKE 'a'|position 1: LIKE needs an identifier on its left, not '5'",
        "color LIKE 'a' ESCAPE 'ab'|position 23: ESCAPE takes one character, not string 'ab'",
        "color LIKE 'a!' ESCAPE '!'|position 12: LIKE pattern 'a!' ends with its escape character",
        "size BETWEEN 1|position 15: expected AND in BETWEEN, found the end of the selector",
        "size NOT 5|position 10: expected BETWEEN, IN or LIKE after NOT, found '5'",
        "color IS 'x'|position 10: expected NULL, found string 'x'",
        "size = 99999999999999999999|position 8: number 99999999999999999999 out of range of a long",
        "size = 1e|position 8: exponent without digits in '1e'",
        "size = 12abc|position 10: unexpected 'abc'",
        "size = 09|position 8: invalid octal number '09'",
        "size = 0x|position 8: invalid hexadecimal number '0x'",
        "size = 0x1FFFFFFFFFFFFFFFF|position 8: invalid hexadecimal number '0x1FFFFFFFFFFFFFFFF'",
        "color = # |position 9: unexpected character '#'",
        "AND|position 1: expected a value, found 'AND'", "|position 1: expected a value, found the end of the selector"})
    void badSelectorsSayWhereAndWhat(String selector, String message) {
        String s = selector == null ? "" : selector;
        if (message == null) {
            Selector.parse(s); // valid: an identifier alone is a condition (a boolean property)
            return;
        }
        assertThatThrownBy(() -> Selector.parse(s)).isInstanceOf(SelectorException.class).hasMessage(message);
    }

    @Test
    void limitsAreEnforced() {
        assertThatThrownBy(() -> Selector.parse("a = '" + "x".repeat(Selector.MAX_LENGTH) + "'"))
            .isInstanceOf(SelectorException.class).hasMessageContaining("longer than");
        String deep = "(".repeat(Selector.MAX_DEPTH + 1) + "a" + ")".repeat(Selector.MAX_DEPTH + 1);
        assertThatThrownBy(() -> Selector.parse(deep)).isInstanceOf(SelectorException.class)
            .hasMessageContaining("nested deeper than " + Selector.MAX_DEPTH);
        Selector.parse("(".repeat(Selector.MAX_DEPTH) + "a" + ")".repeat(Selector.MAX_DEPTH));
        assertThatThrownBy(() -> Selector.parse("NOT ".repeat(Selector.MAX_DEPTH + 1) + "a"))
            .isInstanceOf(SelectorException.class);
        assertThatThrownBy(() -> Selector.parse("a = " + "-".repeat(Selector.MAX_DEPTH + 1) + "b"))
            .isInstanceOf(SelectorException.class);
        // chains are built as loops, and as deep as the length allows: evaluated without trouble
        String ors = "flag" + " OR flag".repeat((Selector.MAX_LENGTH - 4) / 8);
        assertThat(Selector.parse(ors).matches(message)).isTrue();
        String sum = "size" + "+1".repeat((Selector.MAX_LENGTH - 10) / 2) + " > 0";
        assertThat(Selector.parse(sum).matches(message)).isTrue();
    }
}
