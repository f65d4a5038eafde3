package io.skiffmq.server.ctl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Client properties as rabbitmqctl's table formatter prints a field table (Erlang's {@code ~tp} of the table as
 * {@code {Key,Value}} tuples): what {@code io_lib:format("~1000000000000tp", ...)} gives for the same terms.
 */
class ErlangTermsTest {

    @Test
    void aTableIsAListOfTuplesOnOneLine() {
        Map<String, Object> capabilities = new LinkedHashMap<>();
        capabilities.put("publisher_confirms", true);
        capabilities.put("basic.nack", false);
        Map<String, Object> table = new LinkedHashMap<>();
        table.put("product", "RabbitMQ");
        table.put("capabilities", capabilities);
        table.put("connection_name", "app-1");
        table.put("count", 42);
        table.put("ratio", 0.5);
        table.put("list", Arrays.asList("a", 1, null));
        assertThat(ErlangTerms.of(table)).isEqualTo("[{\"product\",\"RabbitMQ\"},{\"capabilities\","
            + "[{\"publisher_confirms\",true},{\"basic.nack\",false}]},{\"connection_name\",\"app-1\"},{\"count\",42},"
            + "{\"ratio\",0.5},{\"list\",[\"a\",1,undefined]}]");
        assertThat(ErlangTerms.of(Map.of())).isEqualTo("[]");
    }

    @Test
    void stringsAreErlangStrings() {
        assertThat(ErlangTerms.of("")).as("the empty string is the empty list").isEqualTo("[]");
        assertThat(ErlangTerms.of("say \"hi\"\\\n\t")).isEqualTo("\"say \\\"hi\\\"\\\\\\n\\t\"");
        assertThat(ErlangTerms.of("héllo ✓")).isEqualTo("\"héllo ✓\"");
        assertThat(ErlangTerms.of("a\u0001")).as("not printable: its code points").isEqualTo("[97,1]");
        assertThat(ErlangTerms.of(List.of("x\u007f"))).isEqualTo("[[120,127]]");
    }
}
