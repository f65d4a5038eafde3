package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;
import java.util.Set;

/**
 * BETWEEN, IN, LIKE and IS NULL (JMS 2.0, 3.8.1.2), each with its NOT form; NULL operands make them unknown, as
 * the spec says (IS NULL excepted). Immutable.
 */
final class Predicates {
    private Predicates() {
    }

    /** {@code a [NOT] BETWEEN low AND high}: {@code low <= a AND a <= high}. */
    static final class Between extends Expression.Condition {
        private final Expression value;
        private final Expression low;
        private final Expression high;
        private final boolean negated;

        Between(Expression value, Expression low, Expression high, boolean negated) {
            this.value = value;
            this.low = low;
            this.high = high;
            this.negated = negated;
        }

        @Override
        Object evaluate(Message message) {
            Object v = value.evaluate(message);
            Boolean above = Comparison.compare(Comparison.Operator.GE, v, low.evaluate(message));
            if (above == Boolean.FALSE) {
                return bool(negated);
            }
            Boolean below = Comparison.compare(Comparison.Operator.LE, v, high.evaluate(message));
            if (below == Boolean.FALSE) {
                return bool(negated);
            }
            if (above == null || below == null) {
                return null;
            }
            return bool(!negated);
        }
    }

    /** {@code identifier [NOT] IN ('a', 'b', …)}: string literals only. */
    static final class In extends Expression.Condition {
        private final Expression value;
        private final Set<String> values;
        private final boolean negated;

        In(Expression value, Set<String> values, boolean negated) {
            this.value = value;
            this.values = values;
            this.negated = negated;
        }

        @Override
        Object evaluate(Message message) {
            Object v = value.evaluate(message);
            if (!(v instanceof String s)) {
                return v == null ? null : Boolean.FALSE; // NULL is unknown; a number is never in a list of strings
            }
            return bool(values.contains(s) != negated);
        }
    }

    /** {@code identifier [NOT] LIKE 'pattern' [ESCAPE 'c']}: {@code _} one character, {@code %} any run. */
    static final class Like extends Expression.Condition {
        private static final byte ONE = 0;
        private static final byte ANY = 1;
        private static final byte LITERAL = 2;
        private final Expression value;
        /** The pattern's characters, and per character whether it is a wildcard ({@link #ONE}, {@link #ANY}). */
        private final char[] chars;
        private final byte[] kinds;
        private final boolean negated;

        Like(Expression value, String pattern, Character escape, int position, boolean negated) {
            this.value = value;
            this.negated = negated;
            char[] c = new char[pattern.length()];
            byte[] k = new byte[pattern.length()];
            int n = 0;
            for (int i = 0; i < pattern.length(); i++) {
                char p = pattern.charAt(i);
                if (escape != null && p == escape) {
                    if (i + 1 >= pattern.length()) {
                        throw new SelectorException(position, "LIKE pattern '" + pattern
                            + "' ends with its escape character");
                    }
                    c[n] = pattern.charAt(++i);
                    k[n++] = LITERAL; // the escaped character, as itself
                } else if (p == '_' || p == '%') {
                    k[n++] = p == '_' ? ONE : ANY;
                } else {
                    c[n] = p;
                    k[n++] = LITERAL;
                }
            }
            this.chars = java.util.Arrays.copyOf(c, n);
            this.kinds = java.util.Arrays.copyOf(k, n);
        }

        @Override
        Object evaluate(Message message) {
            Object v = value.evaluate(message);
            if (!(v instanceof String s)) {
                return v == null ? null : Boolean.FALSE;
            }
            return bool(matches(s) != negated);
        }

        /** Wildcard matching with one backtrack point (the last {@code %}): linear for most patterns, no garbage. */
        boolean matches(String s) {
            int si = 0;
            int pi = 0;
            int starP = -1;
            int starS = 0;
            while (si < s.length()) {
                if (pi < kinds.length && (kinds[pi] == ONE || kinds[pi] == LITERAL && chars[pi] == s.charAt(si))) {
                    si++;
                    pi++;
                } else if (pi < kinds.length && kinds[pi] == ANY) {
                    starP = pi++;
                    starS = si;
                } else if (starP >= 0) {
                    pi = starP + 1;
                    si = ++starS;
                } else {
                    return false;
                }
            }
            while (pi < kinds.length && kinds[pi] == ANY) {
                pi++;
            }
            return pi == kinds.length;
        }
    }

    /** {@code identifier IS [NOT] NULL}. */
    static final class IsNull extends Expression.Condition {
        private final Expression value;
        private final boolean negated;

        IsNull(Expression value, boolean negated) {
            this.value = value;
            this.negated = negated;
        }

        @Override
        Object evaluate(Message message) {
            return bool((value.evaluate(message) == null) != negated);
        }
    }
}
