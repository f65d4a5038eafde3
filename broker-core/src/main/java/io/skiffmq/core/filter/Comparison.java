package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;

/**
 * {@code = <> < <= > >=} (JMS 2.0, 3.8.1.2): numbers compare as numbers, exact ones as longs and any approximate
 * one as doubles (integer/float promotion); strings and booleans compare with {@code =} and {@code <>} only (an
 * ordering of them is unknown); NULL on either side is unknown; values of unlike types (a string and a number) are
 * false, as the spec says. Immutable.
 */
final class Comparison extends Expression.Condition {
    enum Operator {
        EQ("="), NE("<>"), LT("<"), LE("<="), GT(">"), GE(">=");

        final String symbol;

        Operator(String symbol) {
            this.symbol = symbol;
        }

        static Operator of(String symbol) {
            for (Operator o : values()) {
                if (o.symbol.equals(symbol)) {
                    return o;
                }
            }
            return null;
        }

        boolean test(int compared) {
            return switch (this) {
                case EQ -> compared == 0;
                case NE -> compared != 0;
                case LT -> compared < 0;
                case LE -> compared <= 0;
                case GT -> compared > 0;
                case GE -> compared >= 0;
            };
        }
    }

    private final Operator operator;
    private final Expression left;
    private final Expression right;

    Comparison(Operator operator, Expression left, Expression right) {
        this.operator = operator;
        this.left = left;
        this.right = right;
    }

    @Override
    Object evaluate(Message message) {
        return compare(operator, left.evaluate(message), right.evaluate(message));
    }

    static Boolean compare(Operator operator, Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        if (a instanceof Number x && b instanceof Number y) {
            return bool(operator.test(compareNumbers(x, y)));
        }
        boolean sameKind = a instanceof String && b instanceof String || a instanceof Boolean && b instanceof Boolean;
        if (!sameKind) {
            return Boolean.FALSE;
        }
        return switch (operator) {
            case EQ -> bool(a.equals(b));
            case NE -> bool(!a.equals(b));
            default -> null;
        };
    }

    static int compareNumbers(Number x, Number y) {
        if (isExact(x) && isExact(y)) {
            return Long.compare(x.longValue(), y.longValue());
        }
        return Double.compare(x.doubleValue(), y.doubleValue());
    }
}
