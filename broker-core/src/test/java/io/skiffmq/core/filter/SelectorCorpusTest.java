package io.skiffmq.core.filter;

import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.skiffmq.core.message.Message;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.junit.jupiter.api.Test;

/**
 * The selector fuzz corpus ({@code src/test/resources/selectors/}): every valid input parses and evaluates, every
 * invalid one is refused with a {@link SelectorException} naming a position inside it, and thousands of seeded
 * mutations of both do one or the other, never anything else.
 */
class SelectorCorpusTest {
    /** Characters mutations insert: the grammar's own, and some it has no use for. */
    private static final String ALPHABET = "abcXYZ_$019.eE+-*/=<>()',% !#@\\\"\t\nü";
    private static final String[] WORDS = {" AND ", " OR ", " NOT ", " BETWEEN ", " IN ", " LIKE ", " IS ", " NULL ",
        " ESCAPE ", " TRUE ", "(", ")", "'", "''", ",", "9223372036854775808", "1e", ".", "-"};

    private static List<String> corpus(String name) throws IOException {
        try (InputStream in = SelectorCorpusTest.class.getResourceAsStream("/selectors/" + name)) {
            List<String> lines = new ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.startsWith("#") && !line.isEmpty()) {
                    lines.add(line);
                }
            }
            return lines;
        }
    }

    private static Message sample() {
        return amqp10(new ApplicationProperties(Map.of("color", "red", "a", 1, "b", 2.5d, "name", "abc",
            "flag", true, "x", 0.5d, "d", 0, "s", "it's")));
    }

    @Test
    void everyValidInputParsesAndEvaluates() throws IOException {
        Message m = sample();
        try {
            for (String s : corpus("valid.txt")) {
                Selector selector = Selector.parse(s);
                selector.matches(m);
            }
        } finally {
            m.release();
        }
    }

    @Test
    void everyInvalidInputIsRefusedWithItsPosition() throws IOException {
        for (String s : corpus("invalid.txt")) {
            assertThatThrownBy(() -> Selector.parse(s)).as(s).isInstanceOfSatisfying(SelectorException.class,
                e -> assertThat(e.position()).as(s).isBetween(1, s.length() + 1));
        }
    }

    @Test
    void mutationsParseOrFailCleanly() throws IOException {
        List<String> seeds = new ArrayList<>(corpus("valid.txt"));
        seeds.addAll(corpus("invalid.txt"));
        Random random = new Random(20261123);
        Message m = sample();
        int parsed = 0;
        int refused = 0;
        try {
            for (int i = 0; i < 5000; i++) {
                String s = seeds.get(random.nextInt(seeds.size()));
                int mutations = 1 + random.nextInt(4);
                for (int k = 0; k < mutations; k++) {
                    s = mutate(s, random);
                }
                try {
                    Selector.parse(s).matches(m);
                    parsed++;
                } catch (SelectorException e) {
                    assertThat(e.position()).as(s).isBetween(1, s.length() + 1);
                    assertThat(e.getMessage()).as(s).startsWith("position " + e.position() + ": ");
                    refused++;
                } catch (RuntimeException | StackOverflowError e) {
                    fail("'" + s + "' threw " + e, e);
                }
            }
        } finally {
            m.release();
        }
        assertThat(parsed).isGreaterThan(100);
        assertThat(refused).isGreaterThan(100);
    }

    private static String mutate(String s, Random random) {
        int at = s.isEmpty() ? 0 : random.nextInt(s.length() + 1);
        switch (random.nextInt(5)) {
            case 0:
                return s.substring(0, at) + ALPHABET.charAt(random.nextInt(ALPHABET.length())) + s.substring(at);
            case 1:
                return at < s.length() ? s.substring(0, at) + s.substring(at + 1) : s;
            case 2:
                return s.substring(0, at) + WORDS[random.nextInt(WORDS.length)] + s.substring(at);
            case 3: {
                int end = Math.min(s.length(), at + random.nextInt(8));
                return s.substring(0, at) + s.substring(at, end) + s.substring(at, end) + s.substring(end);
            }
            default:
                return at < s.length() ? s.substring(0, at) + "(" + s.substring(at) + ")" : s;
        }
    }
}
