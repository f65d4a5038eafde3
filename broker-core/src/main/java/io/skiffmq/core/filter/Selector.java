package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;

/**
 * A JMS message selector (JMS 2.0, section 3.8: the SQL-92 subset), parsed once and evaluated against messages
 * through their container, never their body: identifiers are message properties (AMQP 1.0 application-properties,
 * AMQP 0-9-1 headers) or the JMS header fields, mapped as Qpid JMS maps them to AMQP ({@link MessageFields}).
 *
 * <table>
 * <caption>Limits</caption>
 * <tr><th>limit</th><th>value</th><th>why</th></tr>
 * <tr><td>{@link #MAX_LENGTH}</td><td>{@value #MAX_LENGTH} characters</td><td>a selector is parsed on the event
 * loop that attaches the link; Artemis and Qpid Broker-J set none, real selectors are a few dozen characters</td></tr>
 * <tr><td>{@link #MAX_DEPTH}</td><td>{@value #MAX_DEPTH} levels</td><td>parentheses, NOT and unary signs nest the
 * recursive-descent parser and the evaluation: bounded so that no selector exhausts a thread's stack</td></tr>
 * </table>
 *
 * <p>Immutable; {@link #matches} is safe from any thread, allocates nothing for literals, identifiers and
 * comparisons beyond what decoding a property needs (boxed arithmetic results excepted).
 */
public final class Selector {
    /** Longest selector accepted, in characters. */
    public static final int MAX_LENGTH = 4096;
    /** Deepest nesting accepted (parentheses, NOT, unary signs). */
    public static final int MAX_DEPTH = 64;

    private final String text;
    private final Expression expression;

    private Selector(String text, Expression expression) {
        this.text = text;
        this.expression = expression;
    }

    /**
     * Parses {@code text}.
     *
     * @throws SelectorException naming the position and the problem when it is not a selector
     */
    public static Selector parse(String text) {
        if (text == null) {
            throw new SelectorException(1, "no selector");
        }
        if (text.length() > MAX_LENGTH) {
            throw new SelectorException(MAX_LENGTH + 1, "selector longer than " + MAX_LENGTH + " characters");
        }
        return new Selector(text, SelectorParser.parse(text));
    }

    /**
     * True when the selector is TRUE for the message; FALSE and unknown are not. A message whose properties do not
     * decode matches nothing.
     */
    public boolean matches(Message message) {
        try {
            return expression.evaluate(message) == Boolean.TRUE;
        } catch (IllegalArgumentException | IllegalStateException e) {
            return false;
        }
    }

    /** The selector as it was given. */
    public String text() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Selector s && s.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
