package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;

/**
 * {@code + - * /} and unary minus on numbers (JMS 2.0, 3.8.1.2): exact operands give a long (Java's overflow), any
 * approximate one a double; NULL or a non-number operand, and an exact division by zero, give NULL. Immutable.
 */
final class Arithmetic extends Expression {
    private final char operator;
    private final Expression left;
    private final Expression right;

    Arithmetic(char operator, Expression left, Expression right) {
        this.operator = operator;
        this.left = left;
        this.right = right;
    }

    @Override
    Type type() {
        return Type.NUMERIC;
    }

    @Override
    Object evaluate(Message message) {
        Object a = left.evaluate(message);
        if (!(a instanceof Number x)) {
            return null;
        }
        Object b = right.evaluate(message);
        if (!(b instanceof Number y)) {
            return null;
        }
        if (isExact(x) && isExact(y)) {
            long l = x.longValue();
            long r = y.longValue();
            return switch (operator) {
                case '+' -> l + r;
                case '-' -> l - r;
                case '*' -> l * r;
                default -> r == 0 ? null : l / r;
            };
        }
        double l = x.doubleValue();
        double r = y.doubleValue();
        return switch (operator) {
            case '+' -> l + r;
            case '-' -> l - r;
            case '*' -> l * r;
            default -> l / r;
        };
    }

    /** Unary minus. */
    static final class Negate extends Expression {
        private final Expression operand;

        Negate(Expression operand) {
            this.operand = operand;
        }

        @Override
        Type type() {
            return Type.NUMERIC;
        }

        @Override
        Object evaluate(Message message) {
            Object v = operand.evaluate(message);
            if (!(v instanceof Number n)) {
                return null;
            }
            return isExact(n) ? (Object) (-n.longValue()) : (Object) (-n.doubleValue());
        }
    }
}
